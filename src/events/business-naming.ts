/**
 * How one business's data is named: the scope of its Redis keys, what is put before the keys of its
 * events, and the `business` its jobs carry. Every business has one, decided once by the config
 * loader (config/load-config.ts); whatever writes or reads a business's data asks its naming, never
 * its id, so that two businesses never mean two ways of naming.
 *
 * The single-business naming is what a config without `businesses:` uses, and what every release
 * before businesses existed wrote: keys under `<prefix>:bridge:`, event keys as the platform sends
 * them, jobs without `business`. A config with `businesses:` gives it to the business that says
 * `takes_over: default`, so that a bridge growing from one business to several (and back) keeps
 * its once-marks, dedupe markers, order, timers, dead letters and records. Every other business
 * has its own: keys under `<prefix>:bridge:b:<id>:`, event keys `<id>:<key>`, jobs with
 * `business: <id>`.
 */
export interface BusinessNaming {
  /**
   * What its jobs carry as `business`, and what tells its data apart: '' for the single-business
   * naming (its jobs carry no `business`), else the business's id.
   */
  readonly tag: string;
  /** Put after `:bridge` in its keys: '' or `:b:<id>`. */
  readonly keyScope: string;
  /** Put before the key of each of its events: '' or `<id>:`. */
  readonly eventKeyPrefix: string;
}

/** The id of the business of a config without `businesses:`, and the word `takes_over:` names its data by. */
export const SINGLE_BUSINESS_ID = 'default';

/** The naming of a config without `businesses:` (and of the business that takes over its data). */
export const SINGLE_BUSINESS_NAMING: BusinessNaming = Object.freeze({
  tag: '',
  keyScope: '',
  eventKeyPrefix: '',
});

/** A business's naming: the single-business one when it takes over that data, else its own. */
export function businessNaming(id: string, takesOverSingle: boolean): BusinessNaming {
  if (takesOverSingle) return SINGLE_BUSINESS_NAMING;
  return { tag: id, keyScope: `:b:${id}`, eventKeyPrefix: `${id}:` };
}

/**
 * The tag of the naming a job's data names by its `business` field. Jobs of the single-business
 * naming carry none (earlier releases wrote none, or null): ''.
 */
export function tagOfJob(business: unknown): string {
  return typeof business === 'string' ? business : '';
}

/** The naming of a tag read from a job (the inverse of `tag`). */
export function namingOfTag(tag: string): BusinessNaming {
  return tag === '' ? SINGLE_BUSINESS_NAMING : businessNaming(tag, false);
}

/** The `business` field a job of this naming carries (none for the single-business naming, as earlier releases wrote). */
export function jobBusinessField(naming: BusinessNaming): { business?: string } {
  return naming.tag === '' ? {} : { business: naming.tag };
}

/** A job's name as bull-board shows it: `timer`, or `timer:<business>` for a business's own naming. */
export function jobNameOf(name: string, naming: BusinessNaming): string {
  return naming.tag === '' ? name : `${name}:${naming.tag}`;
}
