import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runNode } from '../../support/run-node.js';

const CLI = join(process.cwd(), 'dist', 'cli.js');
const DOCS = 'docs';

/** Marks put on the line before a fenced block that shows a command's output (invisible on GitHub). */
const CHECKED = '<!-- checked output -->';
const UNCHECKED = /^<!-- unchecked output: \S.* -->$/;

/** Variables the docs' runs assume unset, as in a fresh shell (see readme-commands.test.ts). */
const CLEAN_ENV: NodeJS.ProcessEnv = { ...process.env };
for (const name of Object.keys(CLEAN_ENV)) {
  if (
    /^(PLATFORM_|BUSINESS_ID|SECRET_KEY|WEBHOOK_SECRET|PORT|RECEIVER_HOST|REDIS_|CRM_|CONVO_BRIDGE_|LOG_LEVEL)/.test(
      name,
    )
  ) {
    delete CLEAN_ENV[name];
  }
}

interface Session {
  /** `docs/FILE.md:LINE` of the command. */
  where: string;
  command: string;
  args: string[];
  /** The lines shown after the command, up to the next `$ ` or the end of the block. */
  shown: string[];
  /** The mark on the line before the block, if any. */
  mark: string;
}

/** Every `$ convo-bridge ...` (or `$ npx convo-bridge ...`) in docs/*.md that shows an output. */
function docSessions(): Session[] {
  const sessions: Session[] = [];
  for (const file of readdirSync(DOCS).filter((name) => name.endsWith('.md'))) {
    const text = readFileSync(join(DOCS, file), 'utf8');
    for (const block of text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)) {
      const before = text.slice(0, block.index).trimEnd();
      const mark = before.slice(before.lastIndexOf('\n') + 1);
      const fenceLine = text.slice(0, block.index).split('\n').length;
      const lines = (block[1] ?? '').replace(/\n$/, '').split('\n');
      lines.forEach((line, i) => {
        const command = /^\$ (?:npx )?(convo-bridge .*)$/.exec(line)?.[1];
        if (command === undefined) return;
        const shown: string[] = [];
        for (let j = i + 1; j < lines.length && !(lines[j] ?? '').startsWith('$ '); j++) {
          shown.push(lines[j] ?? '');
        }
        if (shown.every((l) => l.trim() === '')) return;
        sessions.push({
          where: `${DOCS}/${file}:${fenceLine + 1 + i}`,
          command,
          args: command.split(/\s+/).slice(1),
          shown,
          mark,
        });
      });
    }
  }
  return sessions;
}

/** The shown lines equal the real ones; a line `...` stands for any number of lines. */
function matches(shown: readonly string[], real: readonly string[]): boolean {
  const [first, ...rest] = shown;
  if (first === undefined) return real.length === 0;
  if (first === '...') return real.some((_, i) => matches(rest, real.slice(i))) || matches(rest, []);
  return real[0] === first && matches(rest, real.slice(1));
}

const linesOf = (text: string) =>
  text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => line.trimEnd());

const sessions = docSessions();
const checked = sessions.filter((s) => s.mark === CHECKED);

/**
 * Every command output shown in docs/ is what the command prints today, line for line (README.md's
 * own are checked by readme-commands.test.ts). A block that cannot be run here (it needs a running
 * bridge's data) says so with `<!-- unchecked output: REASON -->`; the others carry
 * `<!-- checked output -->`, so a reader of the Markdown source knows which samples are guaranteed.
 */
describe('the command outputs docs/*.md shows are the real ones', () => {
  it('finds the samples, and each says whether it is checked', () => {
    expect(checked.length).toBeGreaterThanOrEqual(15);
    const unmarked = sessions
      .filter((s) => s.mark !== CHECKED && !UNCHECKED.test(s.mark))
      .map((s) => `${s.where}: put ${CHECKED} (or <!-- unchecked output: REASON -->) before its block`);
    expect(unmarked).toEqual([]);
  });

  it.concurrent.for(checked.map((s) => [`${s.where}: ${s.command}`, s] as const))(
    '%s',
    async ([, session], { expect }) => {
      expect(session.command, 'a checked command is split on spaces: no quotes').not.toMatch(/["'`|<>]/);
      const run = await runNode([CLI, ...session.args], CLEAN_ENV, 30_000);
      expect(run.signal, run.stderr).toBeNull();
      expect([0, 1], `${run.stdout}${run.stderr}`).toContain(run.code);
      const shown = session.shown.map((line) => line.trimEnd());
      const out = linesOf(run.stdout);
      const both = linesOf(`${run.stdout}${run.stderr}`);
      // The docs show stdout, or stdout and stderr together (errors, warnings).
      if (!matches(shown, out) && !matches(shown, both)) {
        expect(both.join('\n'), `${session.where} shows another output`).toBe(shown.join('\n'));
      }
    },
  );
});
