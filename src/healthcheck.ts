// Docker HEALTHCHECK probe: the slim Node image has no curl. Exits 0 when /healthz answers 200.
const port = process.env.PORT ?? '8080';
try {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
  process.exitCode = response.ok ? 0 : 1;
} catch {
  process.exitCode = 1;
}
