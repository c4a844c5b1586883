import { afterAll, beforeAll } from 'vitest';
import { startTestHost, type TestHost } from './host';
import { type ScriptedOpenAI, startScriptedOpenAI } from './scripted-openai';

/**
 * A test file's host and scripted OpenAI-compatible server: both start before the file's tests
 * (the server first, so the host can be pointed at it) and close after them, host first.
 * `take` receives them once started (assign them to the file's variables, configure backends).
 */
export function withScriptedHost(take: (t: TestHost, llm: ScriptedOpenAI) => void | Promise<void>, options: () => Parameters<typeof startTestHost>[0] = () => ({})): void {
  let t: TestHost | undefined;
  let llm: ScriptedOpenAI | undefined;
  beforeAll(async () => {
    llm = await startScriptedOpenAI();
    t = await startTestHost(options());
    await take(t, llm);
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });
}
