/**
 * The network handles a run opens (listeners, sockets, connects and writes in progress), counted from
 * `process.getActiveResourcesInfo()`. A closed server or destroyed socket leaves that list only when
 * libuv has run its close callback, a loop iteration or a few after `close()`/`destroy()` returned —
 * and a socket whose peer closed it (the app's fetch pool, when the dependency closes) a few after that.
 */
const NETWORK = new Set([
  'TCPServerWrap',
  'TCPSocketWrap',
  'TCPWRAP',
  'ConnectWrap',
  'ShutdownWrap',
  'WriteWrap',
  'GetAddrInfoReqWrap',
]);

/** The open network handles now, by kind. */
export function networkHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of process.getActiveResourcesInfo())
    if (NETWORK.has(name)) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/**
 * Waits until no more network handles are open than in `baseline`, checking every few ms for at
 * most `boundMs`. @returns the handles still open beyond the baseline then (`[]` once all closed),
 * e.g. `['TCPSocketWrap x2']`
 */
export async function networkHandlesClosed(
  baseline: ReadonlyMap<string, number>,
  boundMs: number,
): Promise<string[]> {
  const until = performance.now() + boundMs;
  for (;;) {
    const extra = [...networkHandles()]
      .filter(([name, n]) => n > (baseline.get(name) ?? 0))
      .map(([name, n]) => `${name} x${n - (baseline.get(name) ?? 0)}`);
    if (extra.length === 0 || performance.now() >= until) return extra;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
