/**
 * Where a command writes: every command takes a CliIo instead of writing to process.stdout, so
 * that tests can run the CLI in-process and read what it printed (run-cli.ts `runCli`).
 */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** The process's own stdout and stderr (what `convo-bridge` uses when run as a program). */
export const defaultIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};
