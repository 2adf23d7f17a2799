import { DEFAULT_BUSINESS_ID, type LoadedBusiness } from './businesses.js';
import { suggestion } from './describe-zod-issues.js';

/** The businesses of a loaded config, for picking one (LoadedConfig has more; this is all it needs). */
export interface BusinessChoice {
  readonly file: string;
  readonly businesses: readonly LoadedBusiness[];
  /** How the file is written (LoadedConfig.written): a file of one business is advised differently. */
  readonly written: 'top-level' | 'businesses';
}

export type BusinessSelection =
  | { readonly ok: true; readonly business: LoadedBusiness }
  | { readonly ok: false; readonly message: string };

/** At most this many ids are listed in a message; `validate` lists them all. */
const SHOWN_IDS = 20;

/**
 * The business a command works on (`explain`, `test`, `backtest` with `--business ID`): the one
 * named; else the only one; a config of several without a name is a mistake the user must settle,
 * since running another business's rules would look like a plausible answer.
 */
export function selectBusiness(
  loaded: BusinessChoice,
  id: string | undefined,
  flag = '--business',
  /** Another way to name it, said in the message (a test file's `business:`). */
  elsewhere?: string,
): BusinessSelection {
  const { businesses, file } = loaded;
  if (id === undefined) {
    if (businesses.length === 1 && businesses[0]) return { ok: true, business: businesses[0] };
    return {
      ok: false,
      message: `${file} has ${businesses.length} businesses: say which with ${flag} ID${elsewhere === undefined ? '' : ` (or ${elsewhere})`}, one of ${listIds(businesses)}`,
    };
  }
  const found = businesses.find((b) => b.id === id);
  if (found) return { ok: true, business: found };
  if (loaded.written === 'top-level') {
    return {
      ok: false,
      message: `${file} has no businesses (it is one business, "${DEFAULT_BUSINESS_ID}"): leave out ${flag}, or write ${flag} ${DEFAULT_BUSINESS_ID}`,
    };
  }
  const ids = businesses.map((b) => b.id);
  const near = ids.length <= SHOWN_IDS ? suggestion(id, ids) : '';
  const hint = near.startsWith(':') ? near : `; its businesses are ${listIds(businesses)}`;
  return { ok: false, message: `no business ${JSON.stringify(id)} in ${file}${hint}` };
}

function listIds(businesses: readonly LoadedBusiness[]): string {
  const ids = businesses.map((b) => b.id);
  if (ids.length <= SHOWN_IDS) return ids.join(', ');
  return `${ids.slice(0, SHOWN_IDS).join(', ')} and ${ids.length - SHOWN_IDS} more (convo-bridge validate lists them all)`;
}
