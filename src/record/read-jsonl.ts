import type { z } from 'zod';
import { NotTextError, readTextFile } from '../base/decode-text.js';

export type JsonlResult<T> = { ok: true; values: T[] } | { ok: false; problems: string[] };

/**
 * Reads a JSON Lines file, each line checked with `schema`; problems name `file:line`. Blank lines
 * are skipped. At most 20 problems are listed.
 */
export async function readJsonLines<S extends z.ZodType>(
  path: string,
  schema: S,
  what: string,
): Promise<JsonlResult<z.output<S>>> {
  let text: string;
  try {
    text = await readTextFile(path);
  } catch (error) {
    if (error instanceof NotTextError) return { ok: false, problems: [error.message] };
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    return { ok: false, problems: [`cannot read ${path} (${code}): check the path`] };
  }
  const values: z.output<S>[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '' || problems.length >= 20) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      problems.push(`${path}:${i + 1}: not JSON (${(error as Error).message})`);
      return;
    }
    const parsed = schema.safeParse(json);
    if (parsed.success) values.push(parsed.data);
    else {
      const issue = parsed.error.issues[0];
      const at = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      problems.push(`${path}:${i + 1}: not ${what}: ${at}${issue?.message ?? 'invalid'}`);
    }
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, values };
}
