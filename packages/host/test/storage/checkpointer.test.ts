import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/database';

/**
 * The checkpoint thread copies the log into the database file while the main connection only
 * writes (its own automatic checkpoint, the backstop, is far above what this test writes).
 */

const homes: string[] = [];
afterAll(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

describe('checkpoint thread', () => {
  it('moves committed rows into the database file without the writing connection checkpointing', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-ckpt-'));
    homes.push(home);
    const opened = openDatabase(home);
    const file = join(home, 'fengyu.db');
    opened.raw.exec('create table t (id integer primary key, v text)');
    const before = statSync(file).size;
    const insert = opened.raw.prepare('insert into t (v) values (?)');
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(1000));
    // the rows are in the log; the database file grows only when a checkpoint copies them
    const deadline = Date.now() + 20_000;
    while (statSync(file).size < before + 150_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(statSync(file).size).toBeGreaterThanOrEqual(before + 150_000);
    expect(opened.raw.prepare('select count(*) as n from t').get()).toEqual({ n: 200 });
    await opened.close();
  }, 30_000);
});
