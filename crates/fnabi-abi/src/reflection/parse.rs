//! The `iree.abi` JSON parser: type records and function objects, with the JSON path of every error.

use super::json::{LexError, Next, Reader};
use super::{FunctionReflection, NdArrayType, Primitive, ReflectionError, ReflectionErrorKind, TypeRecord};
use crate::limits::MAX_DEPTH;
use crate::structure::Key;
use std::borrow::Cow;

#[derive(Clone, Copy, Debug)]
enum Seg {
    Key(&'static str),
    Index(usize),
}

/// Where a record stands, for the placement rules of `named` and
/// `sdict_kwargs`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ctx {
    /// Directly in `a` (or a lone record): `named` and `sdict_kwargs` allowed.
    ArgRoot,
    /// Directly in `r`: `named` allowed.
    ResultRoot,
    /// Anywhere inside another record.
    Nested,
}

pub(super) struct Parser<'a> {
    r: Reader<'a>,
    path: Vec<Seg>,
}

const RECORD: &str = "a type record (a primitive such as \"f32\", \"unknown\", null, or an array)";

impl<'a> Parser<'a> {
    pub(super) fn new(s: &'a str) -> Self {
        Parser { r: Reader::new(s), path: Vec::with_capacity(8) }
    }

    fn path_string(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for seg in &self.path {
            match seg {
                Seg::Key(k) if s.is_empty() => s.push_str(k),
                Seg::Key(k) => {
                    let _ = write!(s, ".{k}");
                }
                Seg::Index(i) => {
                    let _ = write!(s, "[{i}]");
                }
            }
        }
        s
    }

    fn error(&self, offset: usize, kind: ReflectionErrorKind) -> ReflectionError {
        ReflectionError { offset, path: self.path_string(), kind }
    }

    fn lex(&self, e: LexError) -> ReflectionError {
        self.error(e.offset, ReflectionErrorKind::Syntax(e.message))
    }

    /// An "expected X, got <next token>" error at the next token.
    fn expected(&mut self, what: impl Into<Cow<'static, str>>) -> ReflectionError {
        self.r.ws();
        let got = self.r.describe_next();
        self.error(self.r.offset(), ReflectionErrorKind::Expected { expected: what.into(), got })
    }

    fn punct(&mut self, c: u8, what: &'static str) -> Result<(), ReflectionError> {
        if self.r.eat(c) {
            return Ok(());
        }
        self.r.ws();
        let got = self.r.describe_next();
        Err(self.error(self.r.offset(), ReflectionErrorKind::Syntax(format!("expected {what}, got {got}").into())))
    }

    /// After an array item: `,` (true, another item follows) or `]` (false).
    fn more(&mut self) -> Result<bool, ReflectionError> {
        if self.r.eat(b',') {
            Ok(true)
        } else if self.r.eat(b']') {
            Ok(false)
        } else {
            let got = self.r.describe_next();
            Err(self
                .error(self.r.offset(), ReflectionErrorKind::Syntax(format!("expected `,` or `]`, got {got}").into())))
        }
    }

    pub(super) fn end(&mut self) -> Result<(), ReflectionError> {
        self.r.ws();
        if self.r.peek() == Next::End {
            Ok(())
        } else {
            let got = self.r.describe_next();
            Err(self
                .error(self.r.offset(), ReflectionErrorKind::Syntax(format!("unexpected {got} after the end").into())))
        }
    }

    fn string(&mut self, what: &'static str) -> Result<Cow<'a, str>, ReflectionError> {
        if self.r.peek() != Next::String {
            return Err(self.expected(what));
        }
        self.r.string().map_err(|e| self.lex(e))
    }

    /// A non-negative integer, or `None` for `null` when allowed.
    fn uint(&mut self, what: &'static str, null_ok: bool) -> Result<Option<u64>, ReflectionError> {
        match self.r.peek() {
            Next::Null if null_ok => {
                self.r.literal("null").map_err(|e| self.lex(e))?;
                Ok(None)
            }
            Next::Number => {
                let at = self.r.offset();
                let text = self.r.number().map_err(|e| self.lex(e))?;
                match text.parse::<u64>() {
                    Ok(n) if !text.starts_with('-') => Ok(Some(n)),
                    _ => Err(self.error(
                        at,
                        ReflectionErrorKind::Expected { expected: what.into(), got: format!("number {text}") },
                    )),
                }
            }
            _ => Err(self.expected(what)),
        }
    }

    pub(super) fn function(&mut self) -> Result<FunctionReflection, ReflectionError> {
        if !self.r.eat(b'{') {
            return Err(self.expected("a JSON object {\"a\": [...], \"r\": [...]}"));
        }
        let mut f = FunctionReflection::default();
        let (mut have_a, mut have_r) = (false, false);
        if !self.r.eat(b'}') {
            loop {
                let at = {
                    self.r.ws();
                    self.r.offset()
                };
                let key = self.string("a key (\"a\", \"r\" or \"v\")")?;
                self.punct(b':', "`:`")?;
                let seen = match &*key {
                    "a" => std::mem::replace(&mut have_a, true),
                    "r" => std::mem::replace(&mut have_r, true),
                    "v" => f.v.is_some(),
                    other => {
                        return Err(self.error(
                            at,
                            ReflectionErrorKind::Expected {
                                expected: "a key \"a\", \"r\" or \"v\"".into(),
                                got: format!("key {other:?}"),
                            },
                        ));
                    }
                };
                if seen {
                    return Err(self.error(at, ReflectionErrorKind::Duplicate(key.into_owned())));
                }
                match &*key {
                    "a" => {
                        self.path.push(Seg::Key("a"));
                        f.a = self.record_list(Ctx::ArgRoot)?;
                        self.path.pop();
                    }
                    "r" => {
                        self.path.push(Seg::Key("r"));
                        f.r = self.record_list(Ctx::ResultRoot)?;
                        self.path.pop();
                    }
                    _ => {
                        self.path.push(Seg::Key("v"));
                        self.r.ws();
                        let at = self.r.offset();
                        let v = self.uint("version 1", false)?.unwrap_or_default();
                        if v != 1 {
                            return Err(self.error(
                                at,
                                ReflectionErrorKind::Expected { expected: "version 1".into(), got: format!("{v}") },
                            ));
                        }
                        f.v = Some(v);
                        self.path.pop();
                    }
                }
                if self.r.eat(b',') {
                    continue;
                }
                self.punct(b'}', "`,` or `}`")?;
                break;
            }
        }
        if !have_a || !have_r {
            let missing = if !have_a { "a" } else { "r" };
            return Err(self.error(
                0,
                ReflectionErrorKind::Expected { expected: format!("a key {missing:?}").into(), got: "none".into() },
            ));
        }
        Ok(f)
    }

    fn record_list(&mut self, ctx: Ctx) -> Result<Vec<TypeRecord>, ReflectionError> {
        if !self.r.eat(b'[') {
            return Err(self.expected("an array of type records"));
        }
        let mut out = Vec::new();
        let mut names: Vec<Key> = Vec::new();
        if self.r.eat(b']') {
            return Ok(out);
        }
        loop {
            self.path.push(Seg::Index(out.len()));
            self.r.ws();
            let at = self.r.offset();
            let t = self.record_at(ctx, 0)?;
            if let TypeRecord::Named(k, _) = &t {
                if names.contains(k) {
                    return Err(self.error(at, ReflectionErrorKind::Duplicate(k.to_string())));
                }
                names.push(k.clone());
            }
            let is_kwargs = matches!(t, TypeRecord::SDictKwargs(_));
            let more = self.more()?;
            if more && is_kwargs {
                return Err(self.error(
                    at,
                    ReflectionErrorKind::Expected {
                        expected: "sdict_kwargs only as the last argument".into(),
                        got: "another argument after it".into(),
                    },
                ));
            }
            self.path.pop();
            out.push(t);
            if !more {
                return Ok(out);
            }
        }
    }

    pub(super) fn record_at(&mut self, ctx: Ctx, depth: usize) -> Result<TypeRecord, ReflectionError> {
        self.r.ws();
        let at = self.r.offset();
        if depth >= MAX_DEPTH {
            return Err(self.error(at, ReflectionErrorKind::TooDeep));
        }
        match self.r.peek() {
            Next::Null => {
                self.r.literal("null").map_err(|e| self.lex(e))?;
                Ok(TypeRecord::Null)
            }
            Next::String => {
                let s = self.r.string().map_err(|e| self.lex(e))?;
                if s == "unknown" {
                    return Ok(TypeRecord::Unknown);
                }
                match Primitive::parse(&s) {
                    Some(p) => Ok(TypeRecord::Primitive(p)),
                    None => Err(self.error(
                        at,
                        ReflectionErrorKind::Expected {
                            expected: "a primitive type (i[0-9]+, f[0-9]+, bf16) or \"unknown\"".into(),
                            got: format!("{:?}", &*s),
                        },
                    )),
                }
            }
            Next::Array => {
                self.r.eat(b'[');
                self.path.push(Seg::Index(0));
                let tag = self.string("a type identifier (\"ndarray\", \"slist\", …)")?;
                self.path.pop();
                let r = self.compound(&tag, at, ctx, depth)?;
                Ok(r)
            }
            _ => Err(self.expected(RECORD)),
        }
    }

    /// The fields of a compound record after its tag, through the closing `]`.
    fn compound(&mut self, tag: &str, at: usize, ctx: Ctx, depth: usize) -> Result<TypeRecord, ReflectionError> {
        match tag {
            "named" => {
                if ctx == Ctx::Nested {
                    return Err(self.error(
                        at,
                        ReflectionErrorKind::Expected {
                            expected: "a record (`named` only in the root argument or result list)".into(),
                            got: "a named record".into(),
                        },
                    ));
                }
                self.punct(b',', "`,` and the name")?;
                self.path.push(Seg::Index(1));
                let key = self.string("a name (a string)")?;
                self.path.pop();
                self.punct(b',', "`,` and the slot type")?;
                self.path.push(Seg::Index(2));
                let t = self.record_at(Ctx::Nested, depth + 1)?;
                self.path.pop();
                self.punct(b']', "`]` after the slot type of `named`")?;
                Ok(TypeRecord::Named(Key::from(&*key), Box::new(t)))
            }
            "ndarray" => {
                self.punct(b',', "`,` and the element type")?;
                self.path.push(Seg::Index(1));
                let element = self.record_at(Ctx::Nested, depth + 1)?;
                self.path.pop();
                self.punct(b',', "`,` and the rank")?;
                self.path.push(Seg::Index(2));
                let rank = self.uint("a rank (an integer >= 0, or null)", true)?;
                self.path.pop();
                let mut dims = Vec::new();
                let mut i = 3;
                while self.r.eat(b',') {
                    self.path.push(Seg::Index(i));
                    self.r.ws();
                    let dim_at = self.r.offset();
                    let d = self.uint("a dim (an integer >= 0, or null)", true)?;
                    if rank.is_none_or(|r| dims.len() as u64 >= r) {
                        return Err(self.error(
                            dim_at,
                            ReflectionErrorKind::Expected {
                                expected: match rank {
                                    None => "no dims after a null (unknown) rank".into(),
                                    Some(r) => format!("`]` after {r} dim(s)").into(),
                                },
                                got: format!("dim {}", d.map_or("null".into(), |d| d.to_string())),
                            },
                        ));
                    }
                    dims.push(d);
                    self.path.pop();
                    i += 1;
                }
                if let Some(r) = rank
                    && (dims.len() as u64) < r
                {
                    return Err(self.expected(format!("{r} dim(s) for rank {r} (found {})", dims.len())));
                }
                self.punct(b']', "`]`")?;
                Ok(TypeRecord::NdArray(NdArrayType { element: Box::new(element), dims: rank.map(|_| dims) }))
            }
            "slist" | "stuple" => {
                let mut ts = Vec::new();
                while self.more()? {
                    self.path.push(Seg::Index(ts.len() + 1));
                    ts.push(self.record_at(Ctx::Nested, depth + 1)?);
                    self.path.pop();
                }
                Ok(if tag == "slist" { TypeRecord::SList(ts) } else { TypeRecord::STuple(ts) })
            }
            "sdict" | "sdict_kwargs" => {
                if tag == "sdict_kwargs" && ctx != Ctx::ArgRoot {
                    return Err(self.error(
                        at,
                        ReflectionErrorKind::Expected {
                            expected: "a record (`sdict_kwargs` only as the last argument)".into(),
                            got: "an sdict_kwargs record".into(),
                        },
                    ));
                }
                let mut es: Vec<(Key, TypeRecord)> = Vec::new();
                while self.more()? {
                    self.path.push(Seg::Index(es.len() + 1));
                    if !self.r.eat(b'[') {
                        return Err(self.expected("a slot [\"key\", type]"));
                    }
                    self.path.push(Seg::Index(0));
                    self.r.ws();
                    let key_at = self.r.offset();
                    let key = self.string("a slot key (a string)")?;
                    if es.iter().any(|(k, _)| **k == *key) {
                        return Err(self.error(key_at, ReflectionErrorKind::Duplicate(key.into_owned())));
                    }
                    self.path.pop();
                    self.punct(b',', "`,` and the slot type")?;
                    self.path.push(Seg::Index(1));
                    let t = self.record_at(Ctx::Nested, depth + 1)?;
                    self.path.pop();
                    self.punct(b']', "`]` closing the slot")?;
                    self.path.pop();
                    es.push((Key::from(&*key), t));
                }
                Ok(if tag == "sdict" { TypeRecord::SDict(es) } else { TypeRecord::SDictKwargs(es) })
            }
            "py_homogeneous_list" => {
                self.punct(b',', "`,` and the element type")?;
                self.path.push(Seg::Index(1));
                let t = self.record_at(Ctx::Nested, depth + 1)?;
                self.path.pop();
                self.punct(b']', "`]` after the element type of `py_homogeneous_list`")?;
                Ok(TypeRecord::PyHomogeneousList(Box::new(t)))
            }
            other => Err(self.error(
                at,
                ReflectionErrorKind::Expected {
                    expected:
                        "a type identifier (named, ndarray, slist, stuple, sdict, py_homogeneous_list, sdict_kwargs)"
                            .into(),
                    got: format!("{other:?}"),
                },
            )),
        }
    }
}
