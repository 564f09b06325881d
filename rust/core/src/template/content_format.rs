//! Which content format a chat template expects (vLLM's
//! `_detect_content_format`, `renderers/hf.py`): "openai" when the
//! template loops over a message's `content` (so a message's content is
//! handed to it as a list of parts), else "string" (parts joined).
//!
//! The same walk over the template's syntax tree as vLLM's: the names that
//! alias `messages` (through `set` and namespaces), the loop variables over
//! them, and a loop over one's `content` directly, through a macro
//! parameter that receives it, or over a bare `content` outside macros.

use std::collections::{HashMap, HashSet, VecDeque};

use minijinja::machinery::ast::{CallArg, Expr, ForLoop, Macro, Stmt};

/// How message content reaches the template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentFormat {
    /// Text parts joined by newlines into one string.
    String,
    /// A list of `{"type": "text", "text": ...}` parts.
    OpenAi,
}

impl ContentFormat {
    /// `--chat-template-content-format`: `None` for `auto`.
    pub fn from_flag(value: &str) -> Result<Option<ContentFormat>, String> {
        match value {
            "auto" => Ok(None),
            "string" => Ok(Some(ContentFormat::String)),
            "openai" => Ok(Some(ContentFormat::OpenAi)),
            other => Err(format!("invalid chat template content format {other:?}: expected auto, string or openai")),
        }
    }
}

/// What the walk collects, in the template's order.
#[derive(Default)]
struct Nodes<'t, 'a> {
    sets: Vec<(&'t Expr<'a>, &'t Expr<'a>)>,
    /// Each loop with the macros around it (outermost first).
    loops: Vec<(&'t ForLoop<'a>, Vec<usize>)>,
    macros: Vec<&'t Macro<'a>>,
    /// Calls of a plain name: the name and the arguments.
    calls: Vec<(&'a str, &'t [CallArg<'a>])>,
}

impl<'t, 'a> Nodes<'t, 'a> {
    fn stmts(&mut self, body: &'t [Stmt<'a>], macros: &[usize]) {
        for s in body {
            self.stmt(s, macros);
        }
    }

    fn stmt(&mut self, s: &'t Stmt<'a>, macros: &[usize]) {
        match s {
            Stmt::Template(t) => self.stmts(&t.children, macros),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::ForLoop(f) => {
                self.loops.push((f, macros.to_vec()));
                self.expr(&f.target);
                self.expr(&f.iter);
                if let Some(e) = &f.filter_expr {
                    self.expr(e);
                }
                self.stmts(&f.body, macros);
                self.stmts(&f.else_body, macros);
            }
            Stmt::IfCond(c) => {
                self.expr(&c.expr);
                self.stmts(&c.true_body, macros);
                self.stmts(&c.false_body, macros);
            }
            Stmt::WithBlock(w) => {
                for (target, value) in &w.assignments {
                    self.expr(target);
                    self.expr(value);
                }
                self.stmts(&w.body, macros);
            }
            Stmt::Set(set) => {
                self.sets.push((&set.target, &set.expr));
                self.expr(&set.target);
                self.expr(&set.expr);
            }
            Stmt::SetBlock(b) => {
                self.expr(&b.target);
                if let Some(f) = &b.filter {
                    self.expr(f);
                }
                self.stmts(&b.body, macros);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled);
                self.stmts(&a.body, macros);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter);
                self.stmts(&f.body, macros);
            }
            Stmt::Macro(m) => {
                let index = self.macros.len();
                self.macros.push(m);
                let mut inner = macros.to_vec();
                inner.push(index);
                self.macro_parts(m, &inner);
            }
            Stmt::CallBlock(c) => {
                self.call(&c.call.expr, &c.call.args);
                self.macro_parts(&c.macro_decl, macros);
            }
            Stmt::Do(d) => self.call(&d.call.expr, &d.call.args),
        }
    }

    fn macro_parts(&mut self, m: &'t Macro<'a>, macros: &[usize]) {
        m.args.iter().chain(&m.defaults).for_each(|e| self.expr(e));
        self.stmts(&m.body, macros);
    }

    fn call(&mut self, callee: &'t Expr<'a>, args: &'t [CallArg<'a>]) {
        if let Expr::Var(v) = callee {
            self.calls.push((v.id, args));
        }
        self.expr(callee);
        for arg in args {
            match arg {
                CallArg::Pos(e) | CallArg::Kwarg(_, e) | CallArg::PosSplat(e) | CallArg::KwargSplat(e) => self.expr(e),
            }
        }
    }

    fn expr(&mut self, e: &'t Expr<'a>) {
        match e {
            Expr::Var(_) | Expr::Const(_) => {}
            Expr::Slice(s) => {
                self.expr(&s.expr);
                [&s.start, &s.stop, &s.step].into_iter().flatten().for_each(|x| self.expr(x));
            }
            Expr::UnaryOp(u) => self.expr(&u.expr),
            Expr::BinOp(b) => {
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::Compare(c) => {
                self.expr(&c.expr);
                c.ops.iter().for_each(|op| self.expr(&op.expr));
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr);
                self.expr(&i.true_expr);
                if let Some(f) = &i.false_expr {
                    self.expr(f);
                }
            }
            Expr::Filter(f) => {
                if let Some(inner) = &f.expr {
                    self.expr(inner);
                }
                self.args(&f.args);
            }
            Expr::Test(t) => {
                self.expr(&t.expr);
                self.args(&t.args);
            }
            Expr::GetAttr(g) => self.expr(&g.expr),
            Expr::GetItem(g) => {
                self.expr(&g.expr);
                self.expr(&g.subscript_expr);
            }
            Expr::Call(c) => self.call(&c.expr, &c.args),
            Expr::List(l) => l.items.iter().for_each(|x| self.expr(x)),
            Expr::Tuple(t) => t.items.iter().for_each(|x| self.expr(x)),
            Expr::Map(m) => m.keys.iter().chain(&m.values).for_each(|x| self.expr(x)),
        }
    }

    fn args(&mut self, args: &'t [CallArg<'a>]) {
        for arg in args {
            match arg {
                CallArg::Pos(e) | CallArg::Kwarg(_, e) | CallArg::PosSplat(e) | CallArg::KwargSplat(e) => self.expr(e),
            }
        }
    }
}

/// `_is_var_access`: the name, or a dotted alias such as `ns.rest`.
fn var_access(e: &Expr, name: &str) -> bool {
    match e {
        Expr::Var(v) => v.id == name,
        Expr::GetAttr(g) => match name.rsplit_once('.') {
            Some((base, attr)) => g.name == attr && var_access(&g.expr, base),
            None => false,
        },
        _ => false,
    }
}

/// `_is_attr_access`: `name[key]` or `name.key`.
fn attr_access(e: &Expr, name: &str, key: &str) -> bool {
    match e {
        Expr::GetItem(g) => {
            var_access(&g.expr, name) && matches!(&g.subscript_expr, Expr::Const(c) if c.value.as_str() == Some(key))
        }
        Expr::GetAttr(g) => g.name == key && var_access(&g.expr, name),
        _ => false,
    }
}

/// `_is_var_or_elems_access`: through filters, tests and slices.
fn var_or_elems(e: &Expr, name: &str, key: Option<&str>) -> bool {
    match e {
        Expr::Filter(f) => f.expr.as_ref().is_some_and(|inner| var_or_elems(inner, name, key)),
        Expr::Test(t) => var_or_elems(&t.expr, name, key),
        Expr::Slice(s) => var_or_elems(&s.expr, name, key),
        _ => match key {
            Some(key) => attr_access(e, name, key),
            None => var_access(e, name),
        },
    }
}

/// `_attr_dotted_name` of an assignment target.
fn dotted(e: &Expr) -> Option<String> {
    match e {
        Expr::Var(v) => Some(v.id.to_string()),
        Expr::GetAttr(g) => Some(format!("{}.{}", dotted(&g.expr)?, g.name)),
        _ => None,
    }
}

/// The loop variable's name; `None` where vLLM's assertion fails.
fn loop_name<'a>(f: &ForLoop<'a>) -> Option<&'a str> {
    match &f.target {
        Expr::Var(v) => Some(v.id),
        _ => None,
    }
}

/// `_iter_nodes_assign_var_or_elems(root, "messages")`: every alias.
fn messages_aliases(nodes: &Nodes) -> Vec<String> {
    let mut names = vec!["messages".to_string()];
    let mut seen: HashSet<String> = names.iter().cloned().collect();
    let mut queue: VecDeque<String> = names.iter().cloned().collect();
    while let Some(related) = queue.pop_front() {
        for &(target, value) in &nodes.sets {
            let mut found = Vec::new();
            if let Expr::Var(v) = target {
                if var_or_elems(value, &related, None) {
                    found.push(v.id.to_string());
                }
                if let Expr::Call(c) = value {
                    if matches!(&c.expr, Expr::Var(n) if n.id == "namespace") {
                        for arg in &c.args {
                            if let CallArg::Kwarg(key, kv) = arg {
                                if var_or_elems(kv, &related, None) {
                                    found.push(format!("{}.{key}", v.id));
                                }
                            }
                        }
                    }
                }
            } else if matches!(target, Expr::GetAttr(_)) && var_or_elems(value, &related, None) {
                found.extend(dotted(target));
            }
            for name in found {
                if name != related && seen.insert(name.clone()) {
                    queue.push_back(name.clone());
                }
                names.push(name);
            }
        }
    }
    names
}

/// `_iter_nodes_assign_content_item` yields something; `None` where vLLM's
/// walk raises (then its default, "string", holds).
fn loops_over_content(nodes: &Nodes) -> Option<bool> {
    let aliases = messages_aliases(nodes);
    let mut message_vars = Vec::new();
    for (f, _) in &nodes.loops {
        if aliases.iter().any(|a| var_or_elems(&f.iter, a, None)) {
            message_vars.push(loop_name(f)?);
        }
    }
    let content_of_message = |e: &Expr| message_vars.iter().any(|m| var_or_elems(e, m, Some("content")));
    // Per macro: its parameters that receive a message's content.
    let mut params: HashMap<usize, HashSet<&str>> = HashMap::new();
    for (index, m) in nodes.macros.iter().enumerate() {
        let names: Vec<&str> =
            m.args.iter().filter_map(|a| if let Expr::Var(v) = a { Some(v.id) } else { None }).collect();
        let mut found = HashSet::new();
        for (callee, args) in &nodes.calls {
            if *callee != m.name {
                continue;
            }
            let positional = args.iter().filter_map(|a| if let CallArg::Pos(e) = a { Some(e) } else { None });
            for (i, arg) in positional.enumerate() {
                if i < names.len() && content_of_message(arg) {
                    found.insert(names[i]);
                }
            }
            for arg in args.iter() {
                if let CallArg::Kwarg(key, value) = arg {
                    if names.contains(key) && content_of_message(value) {
                        found.insert(*key);
                    }
                }
            }
        }
        if !found.is_empty() {
            params.insert(index, found);
        }
    }
    for (f, macros) in &nodes.loops {
        if content_of_message(&f.iter) {
            loop_name(f)?;
            return Some(true);
        }
        let Expr::Var(iter) = &f.iter else { continue };
        let macro_params = macros.iter().rev().find_map(|m| params.get(m));
        if macro_params.is_some_and(|p| p.contains(iter.id)) || (macros.is_empty() && iter.id == "content") {
            loop_name(f)?;
            return Some(true);
        }
    }
    Some(false)
}

/// `_detect_content_format(source, default="string")`.
pub fn detect(source: &str) -> ContentFormat {
    let Ok(root) = minijinja::machinery::parse(source, "chat", Default::default()) else {
        return ContentFormat::String;
    };
    let mut nodes = Nodes::default();
    nodes.stmt(&root, &[]);
    match loops_over_content(&nodes) {
        Some(true) => ContentFormat::OpenAi,
        _ => ContentFormat::String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_loops_over_content_as_vllm_does() {
        let openai = [
            "{% for m in messages %}{% for p in m['content'] %}{{ p.text }}{% endfor %}{% endfor %}",
            "{% set ns = namespace(rest=messages[1:]) %}{% for m in ns.rest %}{% for p in m.content|list %}{% endfor %}{% endfor %}",
            "{% macro show(c) %}{% for p in c %}{{ p }}{% endfor %}{% endmacro %}{% for m in messages %}{{ show(m.content) }}{% endfor %}",
            "{% for m in messages %}{% set content = m.content %}{% for p in content %}{% endfor %}{% endfor %}",
        ];
        for t in openai {
            assert_eq!(detect(t), ContentFormat::OpenAi, "{t}");
        }
        let string = [
            "{% for m in messages %}{{ m.content }}{% endfor %}",
            "{% macro show(c) %}{% for p in content %}{% endfor %}{% endmacro %}",
            "{% for m in messages %}",
        ];
        for t in string {
            assert_eq!(detect(t), ContentFormat::String, "{t}");
        }
    }
}
