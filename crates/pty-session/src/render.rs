//! Placeholder renderer until the real one lands (plain line splitting).
#![allow(dead_code)]

#[derive(Debug, Default)]
pub(crate) struct Rendered {
    pub(crate) lines: Vec<String>,
    pub(crate) replies: Vec<u8>,
}

pub(crate) struct Renderer {
    line: Vec<u8>,
}

impl Renderer {
    pub(crate) fn new(_rows: u16) -> Renderer {
        Renderer { line: Vec::new() }
    }
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Rendered) {
        for &b in bytes {
            match b {
                b'\n' => out
                    .lines
                    .push(String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned()),
                b'\r' => {}
                _ => self.line.push(b),
            }
        }
    }
    pub(crate) fn pending(&self) -> String {
        String::from_utf8_lossy(&self.line).into_owned()
    }
    pub(crate) fn pending_is_empty(&self) -> bool {
        self.line.is_empty()
    }
    pub(crate) fn alt_screen(&self) -> bool {
        false
    }
    pub(crate) fn set_rows(&mut self, _rows: u16) {}
}
