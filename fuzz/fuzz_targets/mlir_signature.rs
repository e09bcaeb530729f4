//! The `func.func` header reader: never panics or hangs; errors carry a
//! line and column inside the text; function types print and parse back.
//! Also the lenient scan that compiles read (`vector<…>` functions with
//! their wrapper inserted after the body, at a char boundary of the text),
//! and the ABI text `fnabi compile` embeds from it: it reads back to as
//! many functions, and writing those again gives the same text; each name
//! written as a symbol reads back as `--function` reads it; the edits map
//! each edited line and column back to the user's, and a tool's
//! diagnostics about the edited text (locations, echoed line, caret) read
//! as the user's.
#![no_main]
use fnabi::mlir::abi_embed::abi_text;
use fnabi::mlir::symbol::{function_name, symbol_ref};
use fnabi::mlir::{FunctionType, HeaderError, Visibility, parse_functions, scan_functions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_functions(text) {
        Ok(fns) => {
            for f in fns {
                let printed = f.ty.to_string();
                let back: FunctionType = printed.parse().unwrap_or_else(|e| panic!("{printed}: {e}"));
                assert_eq!(back, f.ty);
                let _ = f.abi_attributes();
            }
        }
        Err(HeaderError::Syntax { offset, line, .. }) => {
            assert!(offset <= text.len());
            assert!(line >= 1 && line <= text.lines().count().max(1) + 1);
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    }
    if let Ok(scanned) = scan_functions(text) {
        let mut wrappers = Vec::new();
        for f in &scanned.decls {
            if let Some(e) = &f.vector_entry {
                assert!(text.is_char_boundary(e.body_end) && text[..e.body_end].ends_with('}'), "{e:?}");
                assert_eq!((e.input_types.len(), e.result_types.len()), (f.ty.inputs.len(), f.ty.results.len()));
                if let Some(w) = fnabi::mlir::vector_entry::wrapper(f) {
                    assert!(!w.contains('\n'), "{w}");
                    wrappers.push((e.body_end, w));
                }
            }
        }
        let (edited, edits) = scanned.edit(text, &wrappers);
        assert_eq!(edited.lines().count(), text.lines().count());
        // Every line reads back as the user's; edited columns map to user
        // columns in order, never to the right, and the line's end to its end.
        for (i, (user, line)) in text.split('\n').zip(edited.split('\n')).enumerate() {
            assert_eq!(edits.user_line(i + 1, line), user, "line {}", i + 1);
            let mut last = 1;
            for col in 1..=line.len() + 1 {
                let (l, u) = edits.user_location(i + 1, col);
                assert!(l == i + 1 && u >= last && u <= col, "line {} col {col} -> {u}", i + 1);
                last = u;
            }
            assert_eq!(last, user.len() + 1, "line {}", i + 1);
            // A tool's diagnostic at a column of this line, echoing it with
            // a caret, reads as the user's line and column; a column the
            // line cannot hold keeps the tool's caret line.
            for col in [0, 1, line.len() / 2 + 1, line.len() + 1, line.len() + 2, usize::MAX] {
                let stderr = format!(
                    "m.mlir:{}:{col}: error: x\n{line}\n{}^\n",
                    i + 1,
                    " ".repeat(col.min(line.len() + 2).saturating_sub(1))
                );
                let shown = edits.user_diagnostics(&stderr, "m.mlir", &edited);
                let (_, u) = edits.user_location(i + 1, col);
                let caret = if (1..=user.len() + 1).contains(&u) {
                    format!("{}^", " ".repeat(u - 1))
                } else {
                    format!("{}^", " ".repeat(col.min(line.len() + 2).saturating_sub(1)))
                };
                assert_eq!(
                    shown,
                    format!("m.mlir:{}:{u}: error: x\n{user}\n{caret}\n", i + 1),
                    "line {} col {col}",
                    i + 1
                );
            }
        }
        // Any text as a tool's output (here the source itself, whose
        // locations may name the label): no panic, and without the label
        // it is passed on unchanged.
        let _ = edits.user_diagnostics(text, "m.mlir", &edited);
        let _ = edits.user_diagnostics(&edited, "m.mlir", &edited);
        if !text.contains("m.mlir") {
            assert_eq!(edits.user_diagnostics(text, "m.mlir", &edited), text);
        }
        for f in &scanned.decls {
            assert_eq!(function_name(&symbol_ref(&f.name)).as_deref(), Some(f.name.as_str()));
        }
        let abi = abi_text(&scanned.decls);
        let back = scan_functions(&abi).unwrap_or_else(|e| panic!("{abi}: {e}"));
        let exported = scanned.decls.iter().filter(|d| d.has_body && d.visibility == Visibility::Public).count();
        assert_eq!(back.decls.len(), exported, "{abi}");
        assert_eq!(abi_text(&back.decls), abi);
    }
});
