// The lanes of `npm test` after the build, run at once: the static checks, vitest (unit,
// integration, cluster, hostile) and the reduced fault suite. vitest and the fault suite mostly
// wait (on Redis, HTTP on loopback, timers, child processes), so side by side the lanes take little
// longer than the longest one instead of their sum. Each lane starts its own Redis processes
// (vitest's global setup, each fault scenario's world) and never touches another's.
//
// Every line a lane prints is prefixed with its name; a lane stops at its first failing step; the
// exit code is 0 only when every lane passed, and the last lines say how long each lane took.
//
// Usage: node scripts/test-lanes.mjs [checks|vitest|faults ...] (every lane when none is named).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const node = process.execPath;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Each lane: its steps in order, each a command and its arguments. */
const LANES = {
  checks: [
    [npm, ['run', '--silent', 'lint']],
    [npm, ['run', '--silent', 'typecheck']],
    [npm, ['run', '--silent', 'check:structure']],
    [npm, ['run', '--silent', 'test:alerts']],
  ],
  vitest: [[node, ['node_modules/vitest/vitest.mjs', 'run']]],
  faults: [[node, ['--import', 'tsx', 'test/faults/run-faults.ts', '--reduced']]],
};

/** npm test runs the hostile suite at a small scale unless HOSTILE_SCALE says otherwise. */
const env = {
  ...process.env,
  HOSTILE_SCALE: process.env.HOSTILE_SCALE ?? '0.05',
  // vitest's files run several at a time here (vitest.config.ts reads it).
  TEST_LANES: process.env.TEST_LANES ?? '4',
};

function runStep(name, [command, args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const prefix = `[${name}] `;
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix}${line}\n`));
    }
    child.once('error', (error) => {
      process.stdout.write(`${prefix}could not start ${command}: ${error.message}\n`);
    });
    child.once('close', (code, signal) => resolve(signal ? `signal ${signal}` : code));
  });
}

async function runLane(name) {
  const started = Date.now();
  let outcome = 0;
  for (const step of LANES[name]) {
    outcome = await runStep(name, step);
    if (outcome !== 0) {
      process.stdout.write(`[${name}] ${step[0]} ${step[1].join(' ')} failed (${outcome})\n`);
      break;
    }
  }
  return { name, passed: outcome === 0, seconds: Math.round((Date.now() - started) / 1000) };
}

const chosen = process.argv.slice(2);
for (const name of chosen) {
  if (!(name in LANES)) {
    console.error(`unknown lane ${JSON.stringify(name)}: use ${Object.keys(LANES).join(', ')}`);
    process.exit(2);
  }
}
const results = await Promise.all((chosen.length > 0 ? chosen : Object.keys(LANES)).map(runLane));
for (const r of results) console.log(`lane ${r.name}: ${r.passed ? 'passed' : 'FAILED'} in ${r.seconds} s`);
process.exit(results.every((r) => r.passed) ? 0 : 1);
