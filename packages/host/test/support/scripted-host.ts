import { afterAll, beforeAll } from 'vitest';
import { startTestHost, type TestHost } from './host';
import { type ScriptedOpenAI, startScriptedOpenAI } from './scripted-openai';

export interface ScriptedHostOptions {
  /** The host's options, read when it starts. */
  host?: () => Parameters<typeof startTestHost>[0];
  /** Runs once both are up (configure backends, note the real guard…). */
  setup?: () => void | Promise<void>;
}

/**
 * A test file's host and scripted OpenAI-compatible server: both start before the file's tests
 * (the server first, so the host can be pointed at it) and close after them, host first. The
 * returned `t` and `llm` stand for them (they forward to the real ones once started), so a file
 * declares them in one line.
 */
export function scriptedHost(options: ScriptedHostOptions = {}): { t: TestHost; llm: ScriptedOpenAI } {
  let t: TestHost | undefined;
  let llm: ScriptedOpenAI | undefined;
  beforeAll(async () => {
    llm = await startScriptedOpenAI();
    t = await startTestHost(options.host?.());
    await options.setup?.();
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });
  return { t: forward(() => t, 'the test host'), llm: forward(() => llm, 'the scripted model server') };
}

function forward<T extends object>(current: () => T | undefined, what: string): T {
  const real = () => {
    const v = current();
    if (!v) throw new Error(`${what} is not started yet (use it inside tests or hooks)`);
    return v;
  };
  return new Proxy({} as T, {
    get: (_, key) => {
      const target = real();
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
  });
}
