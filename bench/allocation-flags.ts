/** Node flags the allocation bench needs: `gc()`, and a young generation (MB) no measured loop fills. */
export const ALLOCATION_FLAGS = [
  '--expose-gc',
  '--min-semi-space-size=128',
  '--max-semi-space-size=128',
];
