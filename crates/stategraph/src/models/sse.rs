//! Server-sent events, read from the bytes of a response: the part of the WHATWG
//! event-stream format the model APIs use.
//!
//! Lines end in LF, CRLF or CR (a CRLF split between two reads is still one end); a line
//! starting with `:` is a comment; `field: value` drops one space after the colon; `data`
//! lines join with `\n`; `event` names the event (`message` when none does); a blank line
//! ends an event, which is sent if it has any `data` line. `id` and `retry` are read past
//! (no client here reconnects). A UTF-8 byte-order mark at the start is dropped; bytes that
//! are not UTF-8 are an error; an event the stream ends inside of is not sent.
//!
//! Written here rather than taken from `eventsource-stream` (which it replaces, reading
//! the same events): that crate copied the rest of its buffer for every line it parsed,
//! the largest cost of a streamed model call in this client's own CPU. This reader scans
//! each byte once and copies only the text of `data` and `event` lines.

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// Its `event` field, `message` when it had none.
    pub(crate) event: String,
    /// Its `data` lines, joined with `\n`.
    pub(crate) data: String,
}

/// Bytes not valid UTF-8 in a line of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotUtf8(pub(crate) String);

/// Reads events from bytes pushed in as they come.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    buf: Vec<u8>,
    /// Where the unread bytes of `buf` start.
    pos: usize,
    /// The last line ended in CR: an LF first in what follows is that line's end.
    after_cr: bool,
    /// A line has been read (a byte-order mark is dropped only from the first).
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl Reader {
    /// Adds bytes read from the stream.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > 4096 && self.pos * 2 > self.buf.len() {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole event of the bytes pushed so far, if there is one.
    pub(crate) fn next_event(&mut self) -> Result<Option<Event>, NotUtf8> {
        loop {
            if self.after_cr {
                match self.buf.get(self.pos) {
                    None => return Ok(None),
                    Some(&b) => {
                        self.after_cr = false;
                        self.pos += usize::from(b == b'\n');
                    }
                }
            }
            let rest = &self.buf[self.pos..];
            let Some(end) = memchr::memchr2(b'\n', b'\r', rest) else {
                return Ok(None);
            };
            self.after_cr = rest[end] == b'\r';
            let start = self.pos;
            self.pos += end + 1;
            let mut line = std::str::from_utf8(&self.buf[start..start + end])
                .map_err(|e| NotUtf8(e.to_string()))?;
            if !self.started {
                self.started = true;
                line = line.strip_prefix('\u{feff}').unwrap_or(line);
            }
            if line.is_empty() {
                if let Some(event) = self.dispatch() {
                    return Ok(Some(event));
                }
                continue;
            }
            let (field, value) = match line.find(':') {
                Some(0) => continue,
                Some(i) => {
                    let v = &line[i + 1..];
                    (&line[..i], v.strip_prefix(' ').unwrap_or(v))
                }
                None => (line, ""),
            };
            match field {
                "data" => {
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                "event" => {
                    self.event.clear();
                    self.event.push_str(value);
                }
                _ => {}
            }
        }
    }

    /// The event a blank line ends, if it had data; the fields are cleared either way.
    fn dispatch(&mut self) -> Option<Event> {
        let had_data = std::mem::take(&mut self.has_data);
        let mut event = std::mem::take(&mut self.event);
        let data = std::mem::take(&mut self.data);
        if !had_data {
            return None;
        }
        if event.is_empty() {
            event.push_str("message");
        }
        Some(Event { event, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event of `parts` pushed one after another.
    fn read(parts: &[&[u8]]) -> Result<Vec<(String, String)>, NotUtf8> {
        let mut r = Reader::default();
        let mut out = Vec::new();
        for p in parts {
            r.push(p);
            while let Some(e) = r.next_event()? {
                out.push((e.event, e.data));
            }
        }
        Ok(out)
    }

    fn ev(event: &str, data: &str) -> (String, String) {
        (event.to_owned(), data.to_owned())
    }

    #[test]
    fn data_lines_join_and_comments_are_skipped() {
        let got = read(&[b": keep-alive\ndata: a\ndata:b\ndata\n\nevent: ping\ndata: {}\n\n"]);
        assert_eq!(got, Ok(vec![ev("message", "a\nb\n"), ev("ping", "{}")]));
    }

    #[test]
    fn every_line_end_reads_alike_even_split() {
        let whole = b"data: x\r\n\r\ndata: y\r\rdata: z\n\n";
        let want = vec![ev("message", "x"), ev("message", "y"), ev("message", "z")];
        assert_eq!(read(&[whole]), Ok(want.clone()));
        for cut in 1..whole.len() {
            let (a, b) = whole.split_at(cut);
            assert_eq!(read(&[a, b]), Ok(want.clone()), "split at {cut}");
        }
        let bytes: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(read(&bytes), Ok(want));
    }

    #[test]
    fn events_without_data_and_unended_events_are_not_sent() {
        let got = read(&[b"\xef\xbb\xbfevent: x\n\nid: 1\nretry: 5\n\ndata: ok\n\ndata: cut"]);
        assert_eq!(got, Ok(vec![ev("message", "ok")]));
        assert_eq!(read(&[b"data:\n\n"]), Ok(vec![ev("message", "")]));
        assert_eq!(read(&[b"data:  two\n\n"]), Ok(vec![ev("message", " two")]));
    }

    #[test]
    fn text_split_inside_a_character_reads_whole_and_bad_bytes_fail() {
        let text = "data: h\u{e9}\u{1f600}\n\n".as_bytes();
        for cut in 1..text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(read(&[a, b]), Ok(vec![ev("message", "h\u{e9}\u{1f600}")]));
        }
        assert!(read(&[b"data: \xff\n\n"]).is_err());
    }
}
