import cliProgress from 'cli-progress';

/**
 * How the demo shows that it is playing: a progress bar on a terminal (cli-progress), or one
 * plain line per step when stdout is not a TTY (CI, pipes, tests) or with `--no-progress`.
 */
export interface DemoProgress {
  start(total: number): void;
  /** One step done; `line` says what happened. */
  step(line: string): void;
  stop(): void;
}

const MAX_LINE = 70;

function shorten(line: string): string {
  return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line;
}

export function createDemoProgress(options: {
  bar: boolean;
  write: (text: string) => void;
  stream?: NodeJS.WriteStream;
}): DemoProgress {
  if (options.bar) {
    const bar = new cliProgress.SingleBar(
      {
        format: ' {bar} {value}/{total} | {step}',
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
        barsize: 24,
        stream: options.stream ?? process.stdout,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      start(total) {
        bar.start(total, 0, { step: 'starting' });
        started = true;
      },
      step(line) {
        bar.increment(1, { step: shorten(line) });
      },
      stop() {
        if (started) bar.stop();
        started = false;
      },
    };
  }
  let total = 0;
  let done = 0;
  return {
    start(count) {
      total = count;
      done = 0;
    },
    step(line) {
      done += 1;
      const width = String(total).length;
      options.write(`[${String(done).padStart(width)}/${total}] ${line}\n`);
    },
    stop() {},
  };
}
