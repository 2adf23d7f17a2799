import { compileTemplate } from '../rules/template.js';
import type { ConfigPath } from './config-document.js';

export interface TemplateProblem {
  path: ConfigPath;
  message: string;
}

/**
 * Template typos (`{{customer.nmae}}`) in a config that failed the schema: the rules compiler,
 * which normally finds them, only runs on a valid config, so without this pass they surfaced one
 * round later, though `validate` promises every problem at once. Walks the
 * raw document for the template fields (note, reply.text, reply.media.caption) under `rules` and
 * `reply_window`, wherever they sit (timers nest actions); the messages are the compiler's.
 */
export function findTemplateProblems(document: unknown): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  const check = (source: unknown, path: ConfigPath) => {
    if (typeof source !== 'string') return;
    const compiled = compileTemplate(source);
    if ('errors' in compiled) {
      for (const message of compiled.errors)
        problems.push({ path, message: `${path.join('.')}: ${message}` });
    }
  };
  const walk = (value: unknown, path: ConfigPath, depth: number) => {
    if (depth > 64 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        walk(item, [...path, i], depth + 1);
      });
      return;
    }
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (key === 'note') check(item, [...path, key]);
      else if (key === 'reply' && item !== null && typeof item === 'object' && !Array.isArray(item)) {
        const reply = item as { text?: unknown; media?: unknown };
        check(reply.text, [...path, 'reply', 'text']);
        if (reply.media !== null && typeof reply.media === 'object') {
          check((reply.media as { caption?: unknown }).caption, [...path, 'reply', 'media', 'caption']);
        }
      } else walk(item, [...path, key], depth + 1);
    }
  };
  if (document !== null && typeof document === 'object') {
    const root = document as Record<string, unknown>;
    walk(root.rules, ['rules'], 0);
    walk(root.reply_window, ['reply_window'], 0);
  }
  return problems;
}
