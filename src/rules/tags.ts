import { z } from 'zod';

/**
 * Tags, the conversation's memory: `tag: vip` (optionally `for: 24h`) and
 * `untag: vip` actions, the `tags: { any | all | none: [...] }` condition and `{{tags}}`. Names
 * are fixed in the config (no templates), so the set of tags a conversation can hold is bounded
 * by the config and holds business labels, never customer data. Pure: the worker keeps them in
 * the conversation hash (worker/exactly-once/tag-actions.ts).
 */

/** Letters, digits, `-`, `_`, `.` and `:`, 1 to 64 characters, starting with a letter or digit. */
export const TAG_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
export const TAG_NAME_HINT =
  'a tag name: 1 to 64 letters, digits, -, _, . or :, starting with a letter or digit (e.g. vip, order:late); case does not matter';

/** A tag name as written; read in lower case, so `VIP` and `vip` are one tag. */
export const tagNameSchema = z
  .string({ error: `expected ${TAG_NAME_HINT}` })
  .regex(TAG_NAME_PATTERN, { error: `expected ${TAG_NAME_HINT}` })
  .transform((name) => name.toLowerCase())
  .meta({ description: TAG_NAME_HINT });

/** Names in a tag list that are not tag names, as issues at their place (a lone name: the list's). */
function checkNames(value: string | string[], ctx: z.RefinementCtx): void {
  const list = Array.isArray(value) ? value : [value];
  list.forEach((name, i) => {
    if (!TAG_NAME_PATTERN.test(name)) {
      ctx.addIssue({
        code: 'custom',
        path: Array.isArray(value) ? [i] : [],
        message: `expected ${TAG_NAME_HINT}`,
        input: name,
      });
    }
  });
}

const nameText = z.string().meta({ pattern: TAG_NAME_PATTERN.source, description: TAG_NAME_HINT });

/**
 * One tag name or a non-empty list of them, read as a list in lower case without repeats. Names
 * are checked after the union, so that a bad lone name is told what a name is (not "a list").
 */
export const tagListSchema = z
  .union([nameText, z.array(nameText).min(1, { error: 'must list at least one tag' })])
  .superRefine(checkNames)
  .transform((value) => [...new Set((Array.isArray(value) ? value : [value]).map((n) => n.toLowerCase()))]);

const tagTestList = z.array(tagNameSchema).min(1, { error: 'must list at least one tag' });

export const tagsConditionSchema = z
  .strictObject({
    any: tagTestList.optional().describe('At least one of these tags is set.'),
    all: tagTestList.optional().describe('Every one of these tags is set.'),
    none: tagTestList.optional().describe('None of these tags is set.'),
  })
  .refine((t) => t.any !== undefined || t.all !== undefined || t.none !== undefined, {
    error: 'tags needs any, all or none: a list of tag names',
  });
export type TagsConditionConfig = z.output<typeof tagsConditionSchema>;

export type TagMode = 'any' | 'all' | 'none';
export const TAG_MODES: readonly TagMode[] = ['any', 'all', 'none'];

/** A conversation's tags: name -> when it expires (ms since epoch), null for never. */
export type TagExpiries = Readonly<Record<string, number | null>>;

/** The tags in force at `nowMs` (expired ones are ignored), as a mutable view for one evaluation. */
export function liveTags(tags: TagExpiries | undefined, nowMs: number): Map<string, number | null> {
  const view = new Map<string, number | null>();
  if (!tags) return view;
  for (const [name, until] of Object.entries(tags)) {
    if (until === null || until > nowMs) view.set(name, until);
  }
  return view;
}

/** `{{tags}}` and reasons: the names, sorted, comma-separated ("gold, vip"); '' when none. */
export function renderTags(view: ReadonlyMap<string, unknown>): string {
  return sortedNames(view).join(', ');
}

export function sortedNames(view: ReadonlyMap<string, unknown>): string[] {
  return [...view.keys()].sort();
}

/** What a planned tag or untag action changes (see rules/plan.ts). */
export type TagChange =
  | { type: 'tag'; tags: readonly string[]; forMs: number | null; expiresAt?: string }
  | { type: 'untag'; tags: readonly string[] };

/**
 * When a tag set by `change` expires: fixed by the plan (`expiresAt`, for actions planned for the
 * event itself) or counted from `nowMs` (a timer's action, counted from when it fires).
 */
export function expiryOf(change: Extract<TagChange, { type: 'tag' }>, nowMs: number): number | null {
  if (change.forMs === null) return null;
  if (change.expiresAt !== undefined) {
    const fixed = Date.parse(change.expiresAt);
    if (Number.isFinite(fixed)) return fixed;
  }
  return nowMs + change.forMs;
}

/** Applies a tag or untag to a view of the tags (later wins: tag then untag leaves it unset). */
export function applyTagChange(view: Map<string, number | null>, change: TagChange, nowMs: number): void {
  if (change.type === 'untag') {
    for (const name of change.tags) view.delete(name);
    return;
  }
  const until = expiryOf(change, nowMs);
  for (const name of change.tags) view.set(name, until);
}

/**
 * The conversation's tags after an event's plan: those in force at `now`, changed by the plan's
 * own tag and untag actions in order (a timer's apply when it fires, not here). For explain and
 * rule tests.
 */
export function tagsAfter(
  tags: TagExpiries | undefined,
  actions: readonly { type: string }[],
  now: Date,
): Map<string, number | null> {
  const view = liveTags(tags, now.getTime());
  for (const action of actions) {
    if (action.type === 'tag' || action.type === 'untag') {
      applyTagChange(view, action as TagChange, now.getTime());
    }
  }
  return view;
}

/** One `tags:` test against the tags in force, with its reason in words. */
export function tagsTest(
  mode: TagMode,
  wanted: readonly string[],
  view: ReadonlyMap<string, unknown>,
): { ok: boolean; reason: string } {
  const has = wanted.filter((name) => view.has(name));
  const current = view.size === 0 ? 'the conversation has no tags' : `its tags: ${renderTags(view)}`;
  const list = `[${wanted.join(', ')}]`;
  const shown = has.map((name) => `'${name}'`).join(', ');
  switch (mode) {
    case 'any':
      return has.length > 0
        ? { ok: true, reason: `tagged ${shown}` }
        : { ok: false, reason: `has none of the tags ${list} (${current})` };
    case 'all': {
      if (has.length === wanted.length) return { ok: true, reason: `tagged ${shown}` };
      const missing = wanted.filter((name) => !view.has(name));
      return { ok: false, reason: `lacks the tags [${missing.join(', ')}] of all: (${current})` };
    }
    case 'none':
      return has.length === 0
        ? { ok: true, reason: `has none of the tags ${list}` }
        : { ok: false, reason: `tagged ${shown}, which tags: none: excludes` };
  }
}
