import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { buildUi } from './build-ui';

declare module 'vitest' {
  export interface ProvidedContext {
    ui2Dist: string;
  }
}

export default function setup(project: TestProject) {
  const dir = buildUi();
  project.provide('ui2Dist', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
