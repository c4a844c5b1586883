import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REDACTED } from '@fengyu/protocol';
import type { Vault } from './vault';
import type { VaultRepository } from './vault.repository';

/**
 * The migration of clear copies into the vault, run at every start (it finds nothing once done):
 * the 0600 JSON files earlier versions kept backend API keys and MCP values in
 * (`secrets/backend-keys.json`, `secrets/mcp-secrets.json`), and settings rows older still that
 * hold an `apiKey` or an MCP env/header value in clear. Each value is sealed into the vault
 * under the name its domain reads (`backend:<id>`, `mcp:<server>/<env|headers>/<name>`), the
 * row keeps the marker, the files are deleted, and on SQLite the freed pages and the WAL are
 * rewritten (VACUUM, then a truncating checkpoint) so no clear copy stays on disk.
 */

const KEEP = new Set([REDACTED, '\u2022\u2022\u2022\u2022']);

type Moves = Map<string, Record<string, string>>;

function add(moves: Moves, owner: string, name: string, value: string): void {
  const m = moves.get(owner) ?? {};
  m[name] = value;
  moves.set(owner, m);
}

function readLegacyFile(path: string, prefix: string, moves: Moves): boolean {
  if (!existsSync(path)) return false;
  try {
    const all = JSON.parse(readFileSync(path, 'utf8')) as Record<string, Record<string, unknown>>;
    for (const [owner, keys] of Object.entries(all ?? {})) for (const [id, v] of Object.entries(keys ?? {})) if (typeof v === 'string') add(moves, owner, `${prefix}${id}`, v);
  } catch {
    // an unreadable file holds nothing to move; it is removed all the same
  }
  return true;
}

/** Moves the clear values of one settings document; true when the document changed. */
function sealDoc(owner: string, doc: Record<string, unknown>, moves: Moves): boolean {
  let changed = false;
  const backends = Array.isArray(doc.backends) ? (doc.backends as Array<Record<string, unknown>>) : [];
  for (const b of backends) {
    if (typeof b?.apiKey === 'string' && typeof b.id === 'string' && !KEEP.has(b.apiKey)) {
      add(moves, owner, `backend:${b.id}`, b.apiKey);
      b.apiKey = REDACTED;
      changed = true;
    }
  }
  const servers = doc.mcpServers && typeof doc.mcpServers === 'object' ? (doc.mcpServers as Record<string, Record<string, unknown>>) : {};
  for (const [server, c] of Object.entries(servers)) {
    for (const kind of ['env', 'headers'] as const) {
      const map = c?.[kind];
      if (!map || typeof map !== 'object') continue;
      for (const [k, v] of Object.entries(map as Record<string, unknown>)) {
        if (typeof v !== 'string' || KEEP.has(v)) continue;
        add(moves, owner, `mcp:${server}/${kind}/${k}`, v);
        (map as Record<string, unknown>)[k] = REDACTED;
        changed = true;
      }
    }
  }
  return changed;
}

/** Returns how many values were moved. */
export async function adoptLegacySecrets(repo: VaultRepository, vault: Vault, home: string): Promise<number> {
  const moves: Moves = new Map();
  const files = [join(home, 'secrets', 'backend-keys.json'), join(home, 'secrets', 'mcp-secrets.json')];
  const found = [readLegacyFile(files[0] as string, 'backend:', moves), readLegacyFile(files[1] as string, 'mcp:', moves)];
  const rewrites: Array<{ owner: string; doc: string }> = [];
  for (const r of await repo.settingsDocs()) {
    const doc = JSON.parse(r.doc) as Record<string, unknown>;
    if (sealDoc(r.owner, doc, moves)) rewrites.push({ owner: r.owner, doc: JSON.stringify(doc) });
  }
  // the vault first: a crash after it leaves clear copies to move again, never a lost value
  let count = 0;
  for (const [owner, values] of moves) {
    count += Object.keys(values).length;
    await vault.mergeInternal(owner, values);
  }
  for (const w of rewrites) await repo.rewriteSettingsDoc(w.owner, w.doc);
  files.forEach((f, i) => found[i] && rmSync(f, { force: true }));
  if (rewrites.length > 0) await repo.compact();
  return count;
}
