//! A tool's diagnostics about a text with fnabi's insertions, read as the
//! user's text: columns, echoed lines and carets.

use fnabi_abi::mlir::signature::SourceEdits;

/// A tool's diagnostics about `edited` (a user's text with fnabi's
/// insertions, see [`SourceEdits`]) as the user's: in every `LABEL:L:C`
/// (and `"LABEL":L:C` of a location) the column is the user's, and the
/// source line MLIR echoes under a diagnostic, with its caret line, is the
/// user's line.
pub(crate) fn user_diagnostics(stderr: &str, label: &str, edited: &str, edits: &SourceEdits) -> String {
    let edited_lines: Vec<&str> = edited.split('\n').collect();
    let mut out = String::with_capacity(stderr.len());
    // After a diagnostic's first line: its line and user column, until its
    // echoed source line; then the caret's column.
    let (mut echo, mut caret): (Option<(usize, usize)>, Option<usize>) = (None, None);
    for piece in stderr.split_inclusive('\n') {
        let (text, end) = piece.strip_suffix('\n').map_or((piece, ""), |t| (t, "\n"));
        if let Some((line, column)) = echo.take()
            && line.checked_sub(1).and_then(|i| edited_lines.get(i)) == Some(&text)
        {
            out.push_str(&edits.user_line(line, text));
            out.push_str(end);
            caret = Some(column);
            continue;
        }
        if let Some(column) = caret.take()
            && text.trim_start() == "^"
        {
            out.push_str(&" ".repeat(column - 1));
            out.push('^');
            out.push_str(end);
            continue;
        }
        let (mapped, first) = user_locations(text, label, edits);
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
/// into the user's, and the first one's (byte offset in `text`, line, user
/// column).
fn user_locations(text: &str, label: &str, edits: &SourceEdits) -> (String, Option<(usize, usize, usize)>) {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
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
        let (line, column) = edits.user_location(line, column);
        out.push_str(&text[at..rest]);
        out.push_str(&format!(":{line}:{column}"));
        at = rest + 1 + l + 1 + c;
        first.get_or_insert((found, line, column));
    }
    out.push_str(&text[at..]);
    (out, first)
}

#[cfg(test)]
mod tests {
    use super::user_diagnostics;
    use fnabi_abi::mlir::signature::scan_functions;

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
            user_diagnostics(&stderr, "m.mlir", &edited, &edits),
            format!(
                "m.mlir:1:{c}: error: use of undeclared SSA value name\n{user}\n{}^\n\
                 m.mlir:2:3: note: at loc(\"m.mlir\":1:{c}) and hm.mlir:1:{col}\nnot the echo\n",
                " ".repeat(c - 1)
            )
        );
        // Line 0 (no line of any text) and column 0 pass through.
        let odd = "m.mlir:0:0: error: x\n^\n";
        assert_eq!(user_diagnostics(odd, "m.mlir", &edited, &edits), odd);
    }
}
