import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/run-cli.js';
import { cli } from '../../support/cli-in-process.js';

const program = buildProgram({ stdout: () => {}, stderr: () => {} });
const commands = program.commands.map((command) => ({
  name: command.name(),
  subcommands: command.commands.map((sub) => sub.name()),
}));
const everySubcommand = new Set(commands.flatMap((command) => command.subcommands));
const words = (text: string) => new Set(text.toLowerCase().match(/[a-z-]+/g) ?? []);

/**
 * Each command's `--help` ends with what THAT command writes: one `Writes:` paragraph that names
 * each of its own subcommands and none it does not have (a sentence shared by every command once
 * told `forget --help` that list, show and export write nothing, and forget writes).
 */
describe('every --help says what that command writes', () => {
  it('lists every command', () => {
    expect(commands.map((c) => c.name)).toContain('forget');
    expect(commands.length).toBeGreaterThan(15);
  });

  it.each(commands)('$name --help', async ({ name, subcommands }) => {
    const help = await cli([name, '--help']);
    expect(help.code).toBe(0);
    const paragraphs = help.stdout.split(/\n\s*\n/).filter((p) => p.startsWith('Writes: '));
    expect(paragraphs, `${name} --help has one "Writes:" paragraph`).toHaveLength(1);
    const said = words(paragraphs[0] ?? '');
    for (const own of subcommands) expect(said, `${name}: names its subcommand ${own}`).toContain(own);
    const foreign = [...everySubcommand].filter((sub) => !subcommands.includes(sub) && said.has(sub));
    expect(foreign, `${name}: names subcommands it does not have`).toEqual([]);
    expect(help.stdout).not.toMatch(/Nothing is written by/);
  });
});
