import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The files under a home whose raw bytes hold `value` (database, WAL, logs, plugin data, key
 * files): what a test of "never stored in clear" greps after real runs. Sockets and other
 * special files are skipped; a file removed while walking is skipped.
 */
export function filesHolding(home: string, value: string): string[] {
  const needle = Buffer.from(value, 'utf8');
  const hits: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      try {
        const st = statSync(path);
        if (st.isDirectory()) walk(path);
        else if (st.isFile() && readFileSync(path).includes(needle)) hits.push(relative(home, path));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  };
  walk(home);
  return hits;
}
