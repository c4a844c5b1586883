import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Secrets kept outside the database, in one JSON file under FENGYU_HOME with mode 0600 per kind
 * (`secrets/backend-keys.json`: owner → backend id → key; `secrets/mcp-secrets.json`: owner →
 * `<server>/<headers|env>/<name>` → value). Writes are atomic (temp file +
 * rename). Nothing here logs a key.
 */
export class SecretStore {
  readonly file: string;

  /** `name` picks the file: `secrets/<name>.json` (backend keys by default; MCP secrets use their own). */
  constructor(home: string, name = 'backend-keys') {
    this.file = join(home, 'secrets', `${name}.json`);
  }

  get(owner: string, id: string): string | undefined {
    return this.read()[owner]?.[id];
  }

  has(owner: string, id: string): boolean {
    return this.get(owner, id) !== undefined;
  }

  /** Replaces the owner's keys with exactly `keys` (ids absent from it are dropped). */
  replace(owner: string, keys: Record<string, string>): void {
    const all = this.read();
    if (Object.keys(keys).length === 0) delete all[owner];
    else all[owner] = keys;
    this.write(all);
  }

  private read(): Record<string, Record<string, string>> {
    if (!existsSync(this.file)) return {};
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.file, 'utf8'));
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, Record<string, string>>) : {};
    } catch {
      return {};
    }
  }

  private write(all: Record<string, Record<string, string>>): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(all), { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
  }
}
