/**
 * The load generator for `npm run bench:ingest`, in its own process: one autocannon run whose
 * settings come as JSON in argv[2]; prints autocannon's result as JSON on stdout.
 */
import autocannon from 'autocannon';

interface LoadSettings {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationSeconds: number;
  /** Fixed total rate (requests per second); omitted = as fast as the server answers. */
  overallRate?: number;
}

const settings = JSON.parse(process.argv[2] ?? '{}') as LoadSettings;
let sequence = 0;

const instance = autocannon(
  {
    url: settings.url,
    method: 'POST',
    headers: settings.headers,
    // Each request gets a unique message id in place of [<id>], so every one is a new event.
    // (autocannon's own idReplacement keeps the template's Content-Length, which hangs servers.)
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          sequence += 1;
          return { ...request, body: settings.body.replace('[<id>]', `${process.pid}-${sequence}`) };
        },
      },
    ],
    connections: settings.connections,
    duration: settings.durationSeconds,
    ...(settings.overallRate === undefined ? {} : { overallRate: settings.overallRate }),
  },
  (error, result) => {
    if (error) {
      process.stderr.write(`${String(error)}\n`);
      process.exit(1);
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
);
process.once('SIGTERM', () => instance.stop());
