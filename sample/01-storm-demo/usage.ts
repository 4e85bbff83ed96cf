/** What `npm run demo -- --help` prints: the options and what each exit code means. */
export const USAGE = `Usage: npm run demo -- [--quick] [--act 1|2] [--hops 3|4] [--attempts 2-5] [--json] [--metrics] [--help]

  (no option)   both acts in full, about 2 min 30 s
                act 1: one service, the retry budget on vs off
                act 2: frontend → backend → data service → database, separate processes,
                naive retry loops vs the library's defaults; writes a chart to
                sample/01-storm-demo/out/storm-chain.svg and .png
  --quick       shorter phases, both acts under a minute
  --act <n>     run act 1 or act 2 only
  --hops <n>    act 2: 3 (default) or 4 services in the chain
  --attempts <n> act 2: attempts per call at every service, 2 to 5 (default 3): 3 hops of 3
                send a dead database 27 requests per call without the library, 3 of 4 send 64
  --json        also print every figure as one JSON object on the last line
  --metrics     act 1 through the NodeSDK + Prometheus exporter: serve /metrics while it runs and
                print the calls, attempts and attempts/call scraped from it
  --help        print this and exit

Exit codes:
  0  every act's claim held
  4  one did not, on a machine that kept up
  5  the machine was too slow for the numbers to mean anything (run it again when it is less busy)
  1  the demo failed (or an option was not understood)
  2  the watchdog ended a run that did not end by itself
  3  something the demo opened was still open after closing`;
