//! A small YAML printer for Mermaid frontmatter, in PyYAML's `yaml.dump` layout (block
//! style, keys sorted). Strings that PyYAML may print plain are printed plain only when
//! they are plainly safe (letters, digits, `_`, `-`, `.`, `/`, inner spaces, and no word
//! YAML would read as a boolean, null or number); others are single-quoted, which reads
//! back the same but may differ from PyYAML's text for exotic strings.

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
    const WORDS: &[&str] = &[
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
    ];
    let safe_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ' '));
    let first = s.chars().next();
    let plain = !s.is_empty()
        && safe_chars
        && !s.starts_with([' ', '-', '.'])
        && !s.ends_with(' ')
        && !first.is_some_and(|c| c.is_ascii_digit())
        && !WORDS.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}
