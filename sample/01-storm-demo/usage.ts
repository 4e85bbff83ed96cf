/** What `npm run demo -- --help` prints: the options and what each exit code means. */
export const USAGE = `Usage: npm run demo -- [--quick] [--json] [--metrics] [--help]

  (no option)  both runs in full, about 60 s
  --quick      shorter phases, about 22 s
  --json       also print the summary as one JSON object on the last line
  --metrics    NodeSDK + Prometheus exporter: serve /metrics while it runs and print the calls,
               attempts and attempts/call scraped from it
  --help       print this and exit

Exit codes:
  0  the retry budget held
  4  it did not, on a machine that kept up
  5  the machine was too slow for the numbers to mean anything (run it again when it is less busy)
  1  the demo failed (or an option was not understood)
  2  the watchdog ended a run that did not end by itself
  3  something the demo opened was still open after closing`;
