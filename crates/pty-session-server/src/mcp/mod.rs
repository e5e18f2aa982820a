//! The MCP face of the service: the one handler with a method per tool, the arguments
//! and results as they travel, the text block and error mapping, progress, and who calls.

pub(crate) mod owner;
pub(crate) mod progress;
pub mod reply;
pub mod tools;
pub mod wire;
