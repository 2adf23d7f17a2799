import type { LoadedBusiness } from '../config/businesses.js';
import { type BusinessChoice, selectBusiness } from '../config/select-business.js';
import { CliError } from './cli-error.js';
import { EXIT } from './exit-codes.js';

/** `--business ID` of explain and backtest: the business, or a usage error naming the ids. */
export function pickBusiness(
  loaded: BusinessChoice,
  id: string | undefined,
  flag = '--business',
): LoadedBusiness {
  const selected = selectBusiness(loaded, id, flag);
  if (!selected.ok) throw new CliError(selected.message, { exitCode: EXIT.invalidInput });
  return selected.business;
}
