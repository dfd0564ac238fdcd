// The types of schema-validator.mjs, which `npm run generate` writes (gateway/config/validator-code.ts).
import type { ErrorObject } from 'ajv'

/** schema.json's validator, compiled ahead of time: fills in defaults, then records every failure in `errors`. */
declare const validate: {
  (data: unknown): boolean
  /** The failures of the last call; null when it passed. */
  errors?: ErrorObject[] | null
}
export default validate
