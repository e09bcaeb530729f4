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
}
