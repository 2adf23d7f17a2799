import { ConvoBridgeError } from '../base/errors.js';

/** A search the reader cannot answer: a cursor it did not make, a query out of bounds (the API answers 400). */
export class StoryQueryError extends ConvoBridgeError {
  constructor(message: string, cause?: unknown) {
    super(message, { code: 'STORY_QUERY_INVALID', cause });
  }
}
