import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Checkpoints a WAL-mode SQLite file from a worker thread with its own connection, so the
 * checkpoint's copy and fsyncs never block the event loop (they were the tail of every commit
 * that happened to trigger the automatic checkpoint). PASSIVE: writers on the main connection go
 * on while it runs; once it has copied every frame, the next write starts the log over. The main
 * connection keeps a large automatic checkpoint as the backstop should this thread be gone.
 */

/** How often the worker copies the log into the database file. */
export const CHECKPOINT_EVERY_MS = 100;
/** The main connection's automatic checkpoint, in pages: the backstop only. */
export const BACKSTOP_PAGES = 4000;

const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const checkpoint = () => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} };
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); checkpoint(); db.close(); parentPort.postMessage('closed'); });
`;

export interface Checkpointer {
  /** Stops the thread after a last checkpoint. */
  stop(): Promise<void>;
}

export function startCheckpointer(file: string, everyMs = CHECKPOINT_EVERY_MS): Checkpointer {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { file, module, everyMs } });
  worker.unref();
  let stopped: Promise<void> | undefined;
  worker.on('error', () => undefined);
  return {
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        const done = () => {
          void worker.terminate().finally(resolve);
        };
        worker.once('message', done);
        worker.once('exit', () => resolve());
        worker.postMessage('stop');
        setTimeout(done, 2000).unref();
      });
      return stopped;
    },
  };
}
