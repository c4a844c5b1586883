import { Command } from 'commander';

/** `fengyu` — serve the host, run a workflow headless, pack and install plugins, install the host as a per-user service. */
const program = new Command('fengyu').description('FengYu — a local AI agent and workflow host').version('0.1.0');

program
  .command('serve', { isDefault: true })
  .description('start the host (HTTP API + web UI on 127.0.0.1)')
  .option('-p, --port <port>', 'port (0 picks a free one)', (v) => Number.parseInt(v, 10))
  .option('--home <dir>', 'data directory (default $FENGYU_HOME or ~/.fengyu)')
  .option('--open', 'open the web UI (token included) in the default browser')
  .action(async (opts: { port?: number; home?: string; open?: boolean }) => {
    const { serveCommand } = await import('./serve-command');
    await serveCommand(opts);
  });

program
  .command('run <workflow>')
  .description('run a workflow file (an AgentPlan, or a run request) headless with live progress')
  .option('--inputs <json>', 'workflow inputs as a JSON object')
  .option('--yes', 'approve every gate without asking')
  .option('--home <dir>', 'data directory')
  .option('--mode <mode>', 'permission mode: ask | approve-for-me | full-access')
  .action(async (file: string, opts: { inputs?: string; yes?: boolean; home?: string; mode?: string }) => {
    const { runCommand } = await import('./run-command');
    process.exitCode = await runCommand(file, opts);
  });

program
  .command('migrate')
  .description('apply pending database migrations (SQLite under --home, or FENGYU_DATABASE_URL)')
  .option('--home <dir>', 'data directory')
  .option('--check', 'only report pending migrations (exit code 1 when some are pending)')
  .action(async (opts: { home?: string; check?: boolean }) => {
    const { migrateCommand } = await import('./ops-commands');
    process.exitCode = await migrateCommand(opts);
  });

program
  .command('doctor')
  .description('check the database, migrations, sandbox, chromium, web UI and plugins; print what is missing')
  .option('--home <dir>', 'data directory')
  .action(async (opts: { home?: string }) => {
    const { doctorCommand } = await import('./ops-commands');
    process.exitCode = await doctorCommand(opts);
  });

const secrets = program.command('secrets').description('the encrypted secrets vault');
secrets
  .command('rotate-key')
  .description('re-encrypt every stored secret with a new key (stop the host first)')
  .option('--home <dir>', 'data directory')
  .action(async (opts: { home?: string }) => {
    const { rotateKeyCommand } = await import('./secrets-commands');
    process.exitCode = await rotateKeyCommand(opts);
  });

const plugin = program.command('plugin').description('plugin packages');
plugin
  .command('pack <dir>')
  .description('pack a plugin folder into a .fyp')
  .option('-o, --out <file>', 'output file')
  .action(async (dir: string, opts: { out?: string }) => {
    const { packCommand } = await import('./plugin-commands');
    process.exitCode = await packCommand(dir, opts);
  });
plugin
  .command('install <file>')
  .description('install a .fyp into the host')
  .option('--home <dir>', 'data directory')
  .action(async (file: string, opts: { home?: string }) => {
    const { installCommand } = await import('./plugin-commands');
    process.exitCode = await installCommand(file, opts);
  });

const workflows = program.command('workflows').description('workflow documents: export and import');
workflows
  .command('export [id]')
  .description('export a workflow as a JSON document (stdout, or -o file); --all --dir writes one stable file per workflow')
  .option('-o, --out <file>', 'output file')
  .option('--all', 'export every workflow')
  .option('--dir <dir>', 'with --all: the folder to write into')
  .option('--home <dir>', 'data directory')
  .action(async (id: string | undefined, opts: { out?: string; all?: boolean; dir?: string; home?: string }) => {
    const { exportCommand } = await import('./workflow-commands');
    process.exitCode = await exportCommand(id, opts);
  });
workflows
  .command('import <file>')
  .description('import an exported workflow document as a new draft')
  .option('--home <dir>', 'data directory')
  .action(async (file: string, opts: { home?: string }) => {
    const { importCommand } = await import('./workflow-commands');
    process.exitCode = await importCommand(file, opts);
  });

program
  .command('mcp')
  .description('serve your published workflows to an MCP client over stdio (bridged to the running host)')
  .option('--home <dir>', 'data directory')
  .action(async (opts: { home?: string }) => {
    const { mcpBridgeCommand } = await import('./mcp-bridge');
    process.exitCode = await mcpBridgeCommand(opts);
  });
program
  .command('inbox')
  .description('list what waits for you: plan reviews, step approvals and inputs of your runs')
  .option('--json', 'print the items as JSON')
  .option('--home <dir>', 'data directory')
  .action(async (opts: { home?: string; json?: boolean }) => {
    const { inboxCommand } = await import('./inbox-commands');
    process.exitCode = await inboxCommand(opts);
  });
program
  .command('answer <id>')
  .description('answer an inbox item: --approve, --reject [reason], or --values JSON (an input)')
  .option('--approve', 'approve (a plan or a step)')
  .option('--reject [reason]', 'reject, with an optional reason')
  .option('--values <json>', "an input step's values, a JSON object")
  .option('--home <dir>', 'data directory')
  .action(async (id: string, opts: { home?: string; approve?: boolean; reject?: string | boolean; values?: string }) => {
    const { answerCommand } = await import('./inbox-commands');
    process.exitCode = await answerCommand(id, opts);
  });

program
  .command('retry <runId>')
  .description('retry a failed or interrupted run from its failed step (a new run; unchanged completed steps are reused)')
  .option('--current', "run the workflow's latest published version instead of the run's own")
  .option('--home <dir>', 'data directory')
  .action(async (runId: string, opts: { home?: string; current?: boolean }) => {
    const { retryCommand } = await import('./retry-command');
    process.exitCode = await retryCommand(runId, opts);
  });

const service = program.command('service').description('a per-user service that starts the host at login (systemd user unit, launchd agent, Windows scheduled task)');
for (const action of ['install', 'uninstall', 'status'] as const) {
  service
    .command(action)
    .description(
      { install: 'write the service definition and start it', uninstall: 'stop the service and remove its definition', status: 'whether the service is installed and running' }[action],
    )
    .option('--dry-run', 'print the file and the commands; write and run nothing')
    .option('--home <dir>', 'data directory the service serves')
    .option('-p, --port <port>', 'a fixed port for the service (default: the host default)', (v) => Number.parseInt(v, 10))
    .action(async (opts: { home?: string; port?: number; dryRun?: boolean }) => {
      const { serviceCommand } = await import('./service-command');
      process.exitCode = await serviceCommand(action, opts);
    });
}

await program.parseAsync(process.argv);
