import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The key families of docs/privacy.md's table "Where customer data lives" (the backticked patterns
 * of each row's first cell), and a matcher for real key names: `{prefix}` is the prefix as written
 * or inside a hash tag (`{cb}`, `{cb:3}`, `{cb:3.17}`), `<...>` and `*` stand for any text, and a
 * business scope (`:b:<business>`) may follow `:bridge`.
 */
export function privacyKeyFamilies(): string[] {
  const text = readFileSync(join(process.cwd(), 'docs', 'privacy.md'), 'utf8');
  const start = text.indexOf('## Where customer data lives');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  const families: string[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const first = line.split('|')[1] ?? '';
    for (const match of first.matchAll(/`([^`]+)`/g)) families.push(match[1] as string);
  }
  return families;
}

export function familyMatcher(family: string, prefix: string): RegExp {
  const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const root = `(?:${quote(prefix)}|\\{${quote(prefix)}(?::[0-9.]+)?\\})`;
  const body = family
    .replace('{prefix}', '\u0000')
    .split(/(<[^>]+>|\*)/)
    .map((part) => (part === '*' || /^<[^>]+>$/.test(part) ? '.+' : quote(part)))
    .join('')
    .replace('\u0000', root)
    .replace(':bridge:', ':bridge(?::b:[A-Za-z0-9_-]+)?:');
  return new RegExp(`^${body}$`);
}
