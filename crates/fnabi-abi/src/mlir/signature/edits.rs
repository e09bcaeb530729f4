//! Where fnabi's insertions into a user's `.mlir` text went, so that a tool's
//! line:column in the edited text reads as the user's.

/// The insertions fnabi made into a user's text (the read-only marks of
/// tensor arguments, the vector entry wrappers), none holding a line break:
/// lines keep their numbers, and only columns after an insertion on its
/// line move. Maps the edited text's positions back to the user's.
///
/// ```
/// use fnabi_abi::mlir::signature::scan_functions;
/// let src = "func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> { return %q : tensor<4xf32> }";
/// let (edited, edits) = scan_functions(src).unwrap().edit(src, &[]);
/// // `%q` is at column 78 of the user's line, further right in the edited one.
/// let col = edited.find("%q").unwrap() + 1;
/// assert!(col > 78);
/// assert_eq!(edits.user_location(1, col), (1, 78));
/// assert_eq!(edits.user_line(1, &edited), src);
/// assert_eq!(edits.user_line(2, "a line without insertions"), "a line without insertions");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceEdits {
    /// Per insertion: its 1-based line, its 0-based byte column in the
    /// user's line, and its length in bytes; ascending.
    at: Vec<(usize, usize, usize)>,
}

impl SourceEdits {
    /// The edits of `text` made by inserting `len` bytes at each byte
    /// `offset` (`(offset, len)`, ascending; no inserted text holds a line
    /// break).
    pub(crate) fn new(text: &str, inserted: &[(usize, usize)]) -> SourceEdits {
        let mut at = Vec::with_capacity(inserted.len());
        let (mut line, mut line_start, mut scanned) = (1, 0, 0);
        for &(offset, len) in inserted {
            let offset = offset.min(text.len());
            for (i, b) in text.as_bytes()[scanned..offset].iter().enumerate() {
                if *b == b'\n' {
                    line += 1;
                    line_start = scanned + i + 1;
                }
            }
            scanned = offset;
            at.push((line, offset - line_start, len));
        }
        SourceEdits { at }
    }

    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// The insertions on `line` (1-based): user column and length.
    fn on_line(&self, line: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let from = self.at.partition_point(|&(l, _, _)| l < line);
        self.at[from..].iter().take_while(move |&&(l, _, _)| l == line).map(|&(_, c, n)| (c, n))
    }

    /// The user's 1-based (line, column) of a 1-based (line, column) of the
    /// edited text. A column inside an inserted text maps to where it was
    /// inserted.
    pub fn user_location(&self, line: usize, column: usize) -> (usize, usize) {
        // Column 0 (no column) stays as it is.
        let Some(c) = column.checked_sub(1) else { return (line, 0) };
        let mut shift = 0;
        for (col, len) in self.on_line(line) {
            let start = col + shift;
            if c < start {
                break;
            }
            if c < start + len {
                return (line, col + 1);
            }
            shift += len;
        }
        (line, c - shift + 1)
    }

    /// The user's text of `line` (1-based), given that line of the edited
    /// text (`edited_line`): the insertions taken out. A text that does not
    /// fit the insertions is returned as it is.
    pub fn user_line(&self, line: usize, edited_line: &str) -> String {
        let text = edited_line;
        let mut out = String::with_capacity(text.len());
        let (mut at, mut shift) = (0, 0);
        for (col, len) in self.on_line(line) {
            let start = col + shift;
            let Some(kept) = text.get(at..start) else { return text.to_owned() };
            out.push_str(kept);
            at = start + len;
            shift += len;
        }
        out.push_str(text.get(at..).unwrap_or_default());
        out
    }

    /// A tool's diagnostics about `edited` (the user's text with these
    /// insertions) as the user's: in every `LABEL:L:C` (and `"LABEL":L:C`
    /// of a location) the column is the user's, and the source line MLIR
    /// echoes under a diagnostic, with its caret line, is the user's line.
    /// Anything else — text that is no echo, a caret beyond its line, a
    /// location of another file — is passed on as it is.
    ///
    /// ```
    /// use fnabi_abi::mlir::signature::scan_functions;
    /// let src = "func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> { return %q : tensor<4xf32> }\n";
    /// let (edited, edits) = scan_functions(src).unwrap().edit(src, &[]);
    /// let line = edited.lines().next().unwrap();
    /// let col = line.find("%q").unwrap() + 1; // where the tool saw it
    /// let stderr = format!("m.mlir:1:{col}: error: undeclared\n{line}\n{:>col$}\n", "^");
    /// let user_col = src.find("%q").unwrap() + 1;
    /// let shown = edits.user_diagnostics(&stderr, "m.mlir", &edited);
    /// assert_eq!(shown, format!("m.mlir:1:{user_col}: error: undeclared\n{}\n{:>user_col$}\n", src.trim_end(), "^"));
    /// ```
    pub fn user_diagnostics(&self, stderr: &str, label: &str, edited: &str) -> String {
        let edited_lines: Vec<&str> = edited.split('\n').collect();
        let mut out = String::with_capacity(stderr.len());
        // After a diagnostic's first line: its line and user column, until
        // its echoed source line; then the caret's column and the length of
        // the user's line it points into.
        let mut echo: Option<(usize, usize)> = None;
        let mut caret: Option<(usize, usize)> = None;
        for piece in stderr.split_inclusive('\n') {
            let (text, end) = piece.strip_suffix('\n').map_or((piece, ""), |t| (t, "\n"));
            if let Some((line, column)) = echo.take()
                && line.checked_sub(1).and_then(|i| edited_lines.get(i)) == Some(&text)
            {
                let user = self.user_line(line, text);
                out.push_str(&user);
                out.push_str(end);
                caret = Some((column, user.len()));
                continue;
            }
            // A caret on the echoed line (column 1 is its first byte, one
            // past its end is allowed): else the tool's caret line stays.
            if let Some((column, len)) = caret.take()
                && text.trim_start() == "^"
                && let Some(pad) = column.checked_sub(1).filter(|&pad| pad <= len)
            {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push('^');
                out.push_str(end);
                continue;
            }
            let (mapped, first) = self.user_locations(text, label);
            if let Some((at, line, column)) = first
                && at == 0
            {
                echo = Some((line, column));
            }
            out.push_str(&mapped);
            out.push_str(end);
        }
        out
    }

    /// `text` with the column of every `LABEL:L:C` and `"LABEL":L:C` turned
    /// into the user's, and the first one's (byte offset in `text`, line,
    /// user column).
    fn user_locations(&self, text: &str, label: &str) -> (String, Option<(usize, usize, usize)>) {
        let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
        if label.is_empty() {
            return (text.to_owned(), None);
        }
        let mut out = String::with_capacity(text.len());
        let (mut first, mut at) = (None, 0);
        for (found, _) in text.match_indices(label) {
            // The whole name: `hm.mlir` is not `m.mlir`.
            if found < at || (found > 0 && !matches!(text.as_bytes()[found - 1], b' ' | b'\t' | b'"' | b'(' | b'\'')) {
                continue;
            }
            let mut rest = found + label.len();
            // `"LABEL":L:C` in a location: the quote is kept.
            if found > 0 && text.as_bytes()[found - 1] == b'"' && text[rest..].starts_with('"') {
                rest += 1;
            }
            let Some(tail) = text[rest..].strip_prefix(':') else { continue };
            let l = digits(tail);
            let Some(tail2) = tail[l..].strip_prefix(':') else { continue };
            let c = digits(tail2);
            let (Ok(line), Ok(column)) = (tail[..l].parse::<usize>(), tail2[..c].parse::<usize>()) else { continue };
            let (line, column) = self.user_location(line, column);
            out.push_str(&text[at..rest]);
            out.push_str(&format!(":{line}:{column}"));
            at = rest + 1 + l + 1 + c;
            first.get_or_insert((found, line, column));
        }
        out.push_str(&text[at..]);
        (out, first)
    }
}

#[cfg(test)]
mod tests {
    use crate::mlir::signature::scan_functions;

    /// Diagnostics about the edited text read as the user's: the column of
    /// each `FILE:L:C` and `"FILE":L:C`, the echoed line and its caret; a
    /// line without insertions, and text that is no echo, stay as they are.
    #[test]
    fn diagnostics_read_as_the_users_text() {
        let src = "func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> { return %q : tensor<4xf32> }\n// two\n";
        let (edited, edits) = scan_functions(src).unwrap().edit(src, &[]);
        let line = edited.lines().next().unwrap();
        let col = line.find("%q").unwrap() + 1;
        let stderr = format!(
            "m.mlir:1:{col}: error: use of undeclared SSA value name\n{line}\n{}^\n\
             m.mlir:2:3: note: at loc(\"m.mlir\":1:{col}) and hm.mlir:1:{col}\nnot the echo\n",
            " ".repeat(col - 1)
        );
        let user = src.lines().next().unwrap();
        let c = user.find("%q").unwrap() + 1;
        assert_ne!(c, col);
        assert_eq!(
            edits.user_diagnostics(&stderr, "m.mlir", &edited),
            format!(
                "m.mlir:1:{c}: error: use of undeclared SSA value name\n{user}\n{}^\n\
                 m.mlir:2:3: note: at loc(\"m.mlir\":1:{c}) and hm.mlir:1:{col}\nnot the echo\n",
                " ".repeat(c - 1)
            )
        );
        // Line 0 (no line of any text) and column 0 pass through.
        let odd = "m.mlir:0:0: error: x\n^\n";
        assert_eq!(edits.user_diagnostics(odd, "m.mlir", &edited), odd);
        // No label: nothing is a location of the file.
        assert_eq!(edits.user_diagnostics(&stderr, "", &edited), stderr);
    }

    /// A caret the user's line cannot hold — column 0 (it underflowed the
    /// padding: a panic) or far past the line's end (a padding of that many
    /// spaces) — is passed on as the tool wrote it.
    #[test]
    fn carets_beyond_the_users_line_stay_as_written() {
        let src = "func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> { return %q : tensor<4xf32> }\n";
        let (edited, edits) = scan_functions(src).unwrap().edit(src, &[]);
        let line = edited.lines().next().unwrap();
        let user = src.trim_end();
        for column in [0, 100_000, usize::MAX] {
            let stderr = format!("m.mlir:1:{column}: error: x\n{line}\n   ^\n");
            let shown = edits.user_diagnostics(&stderr, "m.mlir", &edited);
            let (_, user_column) = edits.user_location(1, column);
            assert_eq!(shown, format!("m.mlir:1:{user_column}: error: x\n{user}\n   ^\n"), "column {column}");
        }
        // One past the line's end is a caret's place (a missing token).
        let end = line.len() + 1;
        let stderr = format!("m.mlir:1:{end}: error: x\n{line}\n{:>end$}\n", "^");
        let user_end = user.len() + 1;
        let shown = edits.user_diagnostics(&stderr, "m.mlir", &edited);
        assert_eq!(shown, format!("m.mlir:1:{user_end}: error: x\n{user}\n{:>user_end$}\n", "^"));
    }
}
