//! A small YAML printer for Mermaid frontmatter, in PyYAML's `yaml.dump` layout (block
//! style, keys sorted). Strings follow PyYAML's choice of style: plain when its scalar
//! analysis allows and YAML 1.1 would not read the text as another type, single-quoted
//! otherwise, double-quoted with escapes when not printable ASCII. Not reproduced: PyYAML's
//! folding of long strings and its layout of multi-line strings.

use serde_json::Value;

/// The YAML text of `v` (a mapping at the top), ending with a newline.
pub(crate) fn dump(v: &Value) -> String {
    let mut out = String::new();
    block(v, 0, &mut out);
    out
}

fn block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for k in keys {
                let child = &m[k.as_str()];
                out.push_str(&format!("{pad}{}:", scalar_str(k)));
                nested(child, indent + 2, indent, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                out.push_str(&format!("{pad}-"));
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let mut inner = String::new();
                        block(item, indent + 2, &mut inner);
                        out.push(' ');
                        out.push_str(inner.trim_start());
                    }
                    _ => nested(item, indent + 2, indent, out),
                }
            }
        }
        other => {
            out.push_str(&format!("{pad}{}\n", scalar(other)));
        }
    }
}

/// After `key:` or `-`: a scalar on the same line, a collection on the next lines.
fn nested(v: &Value, indent: usize, parent_indent: usize, out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            block(v, indent, out);
        }
        // PyYAML puts a mapping's list items at the mapping's own indentation.
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            block(v, parent_indent, out);
        }
        other => out.push_str(&format!(" {}\n", scalar(other))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_str(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

fn scalar_str(s: &str) -> String {
    if s.chars().any(|c| !(' '..='~').contains(&c)) {
        return double_quoted(s);
    }
    if plain_allowed(s) && !resolves_to_other_type(s) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// PyYAML's escapes for a double-quoted scalar (without `allow_unicode`).
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02X}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Whether PyYAML's scalar analysis allows a plain (unquoted) printable ASCII string in
/// block context.
fn plain_allowed(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    if first == b' ' || b[b.len() - 1] == b' ' {
        return false;
    }
    let followed_by_space = |i: usize| b.get(i + 1).is_none_or(|c| *c == b' ');
    if b"#,[]{}&*!|>'\"%@`".contains(&first) {
        return false;
    }
    if matches!(first, b'?' | b':' | b'-') && followed_by_space(0) {
        return false;
    }
    for i in 1..b.len() {
        match b[i] {
            b':' if followed_by_space(i) => return false,
            b'#' if b[i - 1] == b' ' => return false,
            _ => {}
        }
    }
    true
}

fn digits(s: &str, extra: &[u8]) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit() || extra.contains(&c))
}

fn sexagesimal_tail(parts: &[&str]) -> bool {
    parts.iter().all(|p| {
        (1..=2).contains(&p.len()) && digits(p, &[]) && (p.len() == 1 || p.as_bytes()[0] <= b'5')
    })
}

/// Whether YAML 1.1 (PyYAML's resolver) would read the plain text as something other
/// than a string: a boolean, null, integer, float, timestamp, merge key or `=`.
fn resolves_to_other_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL", "<<", "=", ".nan",
        ".NaN", ".NAN",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    // Integers: binary, octal, decimal, hex, sexagesimal.
    if let Some(r) = unsigned.strip_prefix("0b") {
        if digits(r, b"_") && r.bytes().all(|c| matches!(c, b'0' | b'1' | b'_')) {
            return true;
        }
    }
    if let Some(r) = unsigned.strip_prefix("0x") {
        if !r.is_empty() && r.bytes().all(|c| c.is_ascii_hexdigit() || c == b'_') {
            return true;
        }
    }
    if unsigned == "0"
        || (unsigned.len() > 1
            && unsigned.starts_with('0')
            && unsigned[1..]
                .bytes()
                .all(|c| matches!(c, b'0'..=b'7' | b'_')))
    {
        return true;
    }
    let parts: Vec<&str> = unsigned.split(':').collect();
    let head = parts[0];
    let int_head = head
        .bytes()
        .next()
        .is_some_and(|c| (b'1'..=b'9').contains(&c))
        && digits(head, b"_");
    if int_head && (parts.len() == 1 || sexagesimal_tail(&parts[1..])) {
        return true;
    }
    // Floats: `1.5`, `1.`, `.5`, with an optional signed exponent; sexagesimal floats.
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let exponent_ok =
        exponent.is_none_or(|e| e.strip_prefix(['-', '+']).is_some_and(|d| digits(d, &[])));
    if let Some((int, frac)) = mantissa.split_once('.') {
        let int_ok = int.is_empty() || (int.as_bytes()[0].is_ascii_digit() && digits(int, b"_"));
        let frac_ok = frac.bytes().all(|c| c.is_ascii_digit() || c == b'_');
        let some_digit = if int.is_empty() {
            frac.as_bytes().first().is_some_and(u8::is_ascii_digit)
        } else {
            true
        };
        if int_ok
            && frac_ok
            && some_digit
            && exponent_ok
            && !(int.is_empty() && unsigned.len() != s.len())
        {
            return true;
        }
        // Sexagesimal float: `1:30.5`.
        let p: Vec<&str> = int.split(':').collect();
        if exponent.is_none()
            && p.len() > 1
            && p[0].as_bytes().first().is_some_and(u8::is_ascii_digit)
            && digits(p[0], b"_")
            && sexagesimal_tail(&p[1..])
            && frac_ok
        {
            return true;
        }
    }
    // Timestamps: `2001-12-14` and longer forms start with a date.
    let d = s.as_bytes();
    d.len() >= 8 && d[..4].iter().all(u8::is_ascii_digit) && d[4] == b'-' && {
        let rest = &s[5..];
        let mut it = rest.splitn(2, '-');
        let month = it.next().unwrap_or("");
        let day: String = it
            .next()
            .unwrap_or("")
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        (1..=2).contains(&month.len()) && digits(month, &[]) && (1..=2).contains(&day.len())
    }
}
