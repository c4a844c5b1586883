/**
 * A stand-in host for process-lifetime tests:
 *   node --import tsx spawn-fixture.ts <dir>
 * Starts `bash` through the spawn helper; the command records its own pid and a background
 * child's pid in <dir>, sleeps, and would then create <dir>/marker. Prints "ready" once both
 * pids are written. The test SIGKILLs this process and checks that nothing it started lives on.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessGroups } from '../../src/process/spawn';

const dir = process.argv[2] as string;
const groups = new ProcessGroups();
const script = `echo $$ > ${dir}/leader.pid; sleep 30 & echo $! > ${dir}/child.pid; sleep 30; touch ${dir}/marker`;
groups.spawn({ command: 'bash', args: ['-c', script], cwd: dir, env: { PATH: '/usr/bin:/bin' }, runId: 'fixture-run' });
const timer = setInterval(() => {
  if (existsSync(join(dir, 'child.pid'))) {
    clearInterval(timer);
    process.stdout.write('ready\n');
  }
}, 20);
