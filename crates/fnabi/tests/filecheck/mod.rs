//! A small FileCheck: matches a program's output against the `// CHECK:`
//! lines of its source, as MLIR's integration tests do. Supported:
//! `CHECK:` (the pattern on a later line), `CHECK-NEXT:` (on the next
//! line), `CHECK-SAME:` (later on the same line), `CHECK-LABEL:` (like
//! `CHECK:`), `CHECK-NOT:` (not between the previous match and the next),
//! `CHECK-EMPTY:` (the next line is empty); `{{…}}` matches any text (the
//! regular expression inside is not checked), and runs of spaces match
//! any run of spaces, as FileCheck does without `--strict-whitespace`.

/// One directive of a check file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    Check(String),
    Next(String),
    Same(String),
    Label(String),
    Not(String),
    Empty,
}

/// The directives of `source` with prefix `CHECK`, with their 1-based lines.
pub fn directives(source: &str) -> Vec<(usize, Directive)> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let Some(at) = line.find("CHECK") else { continue };
        // Only in a comment, and not a longer prefix (`NOCHECK`, `CHECK2`).
        if !line[..at].contains("//") || line[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '-') {
            continue;
        }
        let rest = &line[at + "CHECK".len()..];
        let (kind, pattern) = match rest.split_once(':') {
            Some((k, p)) => (k, p.trim()),
            None => continue,
        };
        let d = match kind {
            "" => Directive::Check(pattern.to_owned()),
            "-NEXT" => Directive::Next(pattern.to_owned()),
            "-SAME" => Directive::Same(pattern.to_owned()),
            "-LABEL" => Directive::Label(pattern.to_owned()),
            "-NOT" => Directive::Not(pattern.to_owned()),
            "-EMPTY" => Directive::Empty,
            _ => continue,
        };
        out.push((i + 1, d));
    }
    out
}

/// A pattern piece: literal words (spaces between them match any run of
/// spaces) or a wildcard.
enum Piece {
    Text(String),
    Any,
}

fn pieces(pattern: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find("{{") {
        out.push(Piece::Text(rest[..open].to_owned()));
        match rest[open + 2..].find("}}") {
            Some(close) => {
                out.push(Piece::Any);
                rest = &rest[open + 2 + close + 2..];
            }
            None => {
                out.push(Piece::Text(rest[open..].to_owned()));
                rest = "";
            }
        }
    }
    out.push(Piece::Text(rest.to_owned()));
    out
}

/// Collapses runs of whitespace to one space.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where `pattern` matches in `line` at or after byte `from` (both
/// whitespace-squashed): the end of the match.
fn find(line: &str, from: usize, pattern: &str) -> Option<usize> {
    let ps = pieces(&squash(pattern));
    let starts: Vec<usize> = (from..=line.len()).filter(|&i| line.is_char_boundary(i)).collect();
    'start: for s in starts {
        let mut at = s;
        let mut any = false;
        for (k, p) in ps.iter().enumerate() {
            match p {
                Piece::Any => any = true,
                Piece::Text(t) if t.is_empty() => {}
                Piece::Text(t) => {
                    let t = if k > 0 { t.trim_start() } else { t.as_str() };
                    let found =
                        if any { line[at..].find(t).map(|i| at + i) } else { line[at..].starts_with(t).then_some(at) };
                    match found {
                        Some(i) => at = i + t.len(),
                        None => continue 'start,
                    }
                    any = false;
                }
            }
        }
        if any {
            at = line.len();
        }
        return Some(at);
    }
    None
}

/// Checks `output` against `directives`; an error says which directive
/// failed, at which source line, and what the output had there.
pub fn check(output: &str, directives: &[(usize, Directive)]) -> Result<(), String> {
    let lines: Vec<String> = output.lines().map(squash).collect();
    // The position after the last match: (line, byte in the line).
    let mut line = 0usize;
    let mut col = 0usize;
    let mut matched_any = false;
    let mut pending_not: Vec<(usize, String)> = Vec::new();
    let context = |l: usize| lines.get(l).cloned().unwrap_or_else(|| "<end of output>".into());
    for (src_line, d) in directives {
        match d {
            Directive::Check(p) | Directive::Label(p) => {
                let from_line = line;
                let mut found = None;
                for (l, text) in lines.iter().enumerate().skip(line) {
                    let start = if l == line { col } else { 0 };
                    if let Some(end) = find(text, start, p) {
                        found = Some((l, end));
                        break;
                    }
                }
                let Some((l, end)) = found else {
                    return Err(format!("line {src_line}: CHECK: {p:?} not found after output line {}", from_line + 1));
                };
                for (nl, np) in pending_not.drain(..) {
                    for (k, text) in lines.iter().enumerate().take(l + 1).skip(from_line) {
                        if find(text, 0, &np).is_some() {
                            return Err(format!("line {nl}: CHECK-NOT: {np:?} found on output line {}", k + 1));
                        }
                    }
                }
                (line, col) = (l, end);
            }
            Directive::Next(p) => {
                let l = if matched_any { line + 1 } else { 0 };
                match lines.get(l).and_then(|text| find(text, 0, p)) {
                    Some(end) => (line, col) = (l, end),
                    None => {
                        return Err(format!(
                            "line {src_line}: CHECK-NEXT: {p:?} does not match output line {}: {:?}",
                            l + 1,
                            context(l)
                        ));
                    }
                }
            }
            Directive::Same(p) => match lines.get(line).and_then(|text| find(text, col, p)) {
                Some(end) => col = end,
                None => {
                    return Err(format!(
                        "line {src_line}: CHECK-SAME: {p:?} does not match the rest of output line {}: {:?}",
                        line + 1,
                        context(line)
                    ));
                }
            },
            Directive::Empty => {
                let l = if matched_any { line + 1 } else { 0 };
                if lines.get(l).is_none_or(|t| !t.is_empty()) {
                    return Err(format!("line {src_line}: CHECK-EMPTY: output line {} is {:?}", l + 1, context(l)));
                }
                (line, col) = (l, 0);
            }
            Directive::Not(p) => {
                pending_not.push((*src_line, p.clone()));
                continue;
            }
        }
        matched_any = true;
    }
    for (nl, np) in pending_not {
        for (k, text) in lines.iter().enumerate().skip(line) {
            if find(text, 0, &np).is_some() {
                return Err(format!("line {nl}: CHECK-NOT: {np:?} found on output line {}", k + 1));
            }
        }
    }
    Ok(())
}

#[test]
fn matcher_follows_filecheck() {
    let src =
        "// CHECK: a = {{[0-9]+}} b\n// CHECK-SAME: c\n// CHECK-NEXT: ( 1,  2 )\n// CHECK-NOT: bad\n// CHECK: end\n";
    let d = directives(src);
    assert_eq!(d.len(), 5);
    assert!(check("x\na = 12 b c\n( 1, 2 )\nok\nend\n", &d).is_ok());
    let e = check("a = 1 b\nc\n( 1, 2 )\nend\n", &d).unwrap_err();
    assert!(e.contains("line 2: CHECK-SAME"), "{e}");
    let e = check("a = 1 b c\nz\n( 1, 2 )\nend\n", &d).unwrap_err();
    assert!(e.contains("line 3: CHECK-NEXT"), "{e}");
    let e = check("a = 1 b c\n( 1, 2 )\nbad\nend\n", &d).unwrap_err();
    assert!(e.contains("line 4: CHECK-NOT"), "{e}");
    let e = check("a = 1 b c\n( 1, 2 )\n", &d).unwrap_err();
    assert!(e.contains("line 5: CHECK: \"end\" not found"), "{e}");
    assert!(directives("// NOCHECK: x\n// CHECK-FOO: y\nCHECK: z\n").is_empty());
}
