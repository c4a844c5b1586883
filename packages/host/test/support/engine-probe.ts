import { createRequire } from 'node:module';
import { composeHost } from '../../src/compose';

/**
 * Child-process probe: composes a whole host on SQLite (argv[2] = home) and prints whether the
 * job engine's package was loaded by then, and — as a control that the check sees it — after
 * importing it explicitly.
 */
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/node_modules/pg-boss/'));
const host = await composeHost({ home: process.argv[2] as string, database: 'memory', sandbox: 'off', logLevel: 'silent' });
const whileRunning = loaded();
await host.stop();
await host.closeDatabase();
await import('pg-boss');
process.stdout.write(`${JSON.stringify({ whileRunning, afterImport: loaded() })}\n`);
