/* The symbol format, for the rooms that serve symbols; defined in common/ so markets/ reads it too. */
export {
  SYMBOL_MAX_LENGTH,
  SYMBOL_OPENAPI_PATTERN,
  SYMBOL_PATTERN,
  symbolListOpenApiPattern,
} from '../common/symbol-format.js';
