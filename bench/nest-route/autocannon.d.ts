/** The part of autocannon's API the Nest route bench uses (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
  }
  interface Result {
    requests: { average: number };
    /** Milliseconds. */
    latency: { p99: number };
    non2xx: number;
    errors: number;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
