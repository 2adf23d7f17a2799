import type { Command } from 'commander';

/**
 * What each command writes (Redis, files, the platform, other servers), said at the end of its
 * own `--help`: an operator deciding whether a command is safe to run against production reads it
 * there, for that command only. Every command registered must have a line (command-writes test).
 */
export const COMMAND_WRITES: Readonly<Record<string, string>> = {
  start:
    'Redis: the events it receives, quarantined bodies, conversation state, timers, action ledgers and dead letters (and recorded events and shadow rules results when record: or shadow: is on); the platform and destinations: the actions the rules take.',
  serve: 'Redis: the events it receives and quarantined bodies; nothing on the platform.',
  work: 'Redis: conversation state, timers, action ledgers and dead letters (and recorded events and shadow rules results when record: or shadow: is on); the platform and destinations: the actions the rules take.',
  validate: 'nothing: it reads the config and its rules files.',
  explain: 'nothing: it reads the config and the event; no action is taken.',
  test: 'nothing: it reads the config and the rule test files.',
  backtest: 'nothing in Redis and no action; --save writes its file.',
  schema: 'nothing: the schema goes to stdout.',
  dlq: 'list and show write nothing; retry puts a dead letter back on its queue and removes it from the dead letters; purge deletes dead letters.',
  quarantine:
    'list and show write nothing; replay queues a body as an event and removes its entry; purge deletes entries.',
  events: 'nothing in Redis: list and show only read; export writes its --out file (else stdout).',
  shadow: 'report writes nothing; reset deletes the shadow rules counts and differences.',
  timers: 'nothing: list only reads.',
  forget: 'erases what it finds in the stores listed above; with --dry-run nothing.',
  reshard: 'moves every key of the bridge to its new shard and records the new layout; with --check nothing.',
  emulator: 'nothing on disk or in Redis: its state lives in memory; it sends webhooks to the URLs given.',
  demo: 'Redis: its own data under a key prefix unique to the run (REDIS_URL, else a private redis-server); a temporary folder for the bridge log, removed after a run that passed.',
  console:
    'link writes nothing (it signs a token with admin.link_secret); link revoke adds the link id to the revoked set in Redis.',
  'send-test-webhook':
    'one webhook to --url, which the receiver stores as an event (the test ping is answered and not stored).',
};

/** Ends each registered command's `--help` with what it writes. */
export function addWritesHelp(program: Command): void {
  for (const command of program.commands) {
    const writes = COMMAND_WRITES[command.name()];
    if (writes !== undefined) command.addHelpText('after', `\nWrites: ${writes}`);
  }
}
