// A markdownlint rule (.markdownlint-cli2.jsonc) for the table mistake the built-in table rules
// cannot see: when the delimiter row's cell count differs from the header's, GFM renders no
// table at all, so MD055/MD056 find no table to check and the rows show as one run-on paragraph.

/** Token types whose lines are not Markdown text: a `|` line inside them is not a table row. */
const VERBATIM = new Set(['codeFenced', 'codeIndented', 'htmlFlow']);
/** A line that reads as a table row: it starts with a pipe (after a list or quote indent). */
const ROW = /^[\s>]*\|/;

/** Line numbers (1-based) covered by tokens of the given types, anywhere in the tree. */
function linesOf(tokens, types, into = new Set()) {
  for (const token of tokens) {
    if (types.has(token.type)) {
      for (let line = token.startLine; line <= token.endLine; line += 1) into.add(line);
    } else {
      linesOf(token.children, types, into);
    }
  }
  return into;
}

export default {
  names: ['table-rows-render'],
  description: 'Table rows that do not render as a table',
  tags: ['table'],
  parser: 'micromark',
  function: (params, onError) => {
    const { tokens } = params.parsers.micromark;
    const rendered = linesOf(tokens, new Set(['table', ...VERBATIM]));
    let run = [];
    const report = () => {
      const [first] = run;
      if (first !== undefined) {
        onError({
          lineNumber: first,
          detail:
            `${String(run.length)} line(s) read as plain text, not a table: the header, the ` +
            'delimiter row (`| --- |`) and every row need one cell per column',
          context: params.lines[first - 1]?.slice(0, 60),
        });
      }
      run = [];
    };
    params.lines.forEach((line, index) => {
      const lineNumber = index + 1;
      if (ROW.test(line) && !rendered.has(lineNumber)) run.push(lineNumber);
      else report();
    });
    report();
  },
};
