import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every non-spec TypeScript source below `dir`, recursively (for rules checked over the code itself). */
export function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}
