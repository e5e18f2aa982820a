//! Lines that fill the window exactly, and their multiples, on real programs: a terminal
//! leaves the cursor on the last column (a pending wrap), and what the program sends next
//! decides whether the row goes on. Each reply must read as the terminal shows it, never
//! the next echo drawn over the last answer, at every width, through resizes between calls
//! and in the same call as the data.

use pty_session::{OpenRequest, Owner, PtyService, SendRequest, SessionId};

use crate::support::*;

/// Sends `data` (with Enter), at `cols` columns if given, and returns the reply's lines
/// and pending line.
async fn send(
    pty: &PtyService,
    owner: &Owner,
    id: &SessionId,
    data: &str,
    cols: Option<u16>,
) -> (String, String) {
    let mut request = SendRequest::new(data);
    if let Some(cols) = cols {
        request = request.cols(cols);
    }
    let sent = pty.send(owner, id, request).await.expect("send");
    (sent.delta.text, sent.pending)
}

/// `echo` of a word long enough that `$ echo WORD` is `width` characters, and the lines it
/// reads as.
fn echo_filling(width: usize, letter: char) -> (String, String) {
    let word: String = std::iter::repeat_n(letter, width - "$ echo ".len()).collect();
    let command = format!("echo {word}");
    let lines = format!("$ {command}\n{word}\n");
    (command, lines)
}

/// Commands of the default width, twice it, and once more after the rows merged in the
/// past, to the shell `request` opens: each reply is the echo and the answer.
async fn commands_that_fill_the_window_exactly(request: OpenRequest) {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, request).await;
    let id = &opened.session_id;
    for (width, letter) in [(120, 'A'), (120, 'B'), (240, 'C'), (120, 'D'), (240, 'E')] {
        let (command, lines) = echo_filling(width, letter);
        let reply = send(&pty, &owner, id, &command, None).await;
        let expected = (lines, "$ ".to_owned());
        assert_eq!(reply, expected, "a {width}-character command");
    }
    pty.shutdown().await;
}

#[tokio::test]
async fn bash_commands_that_fill_the_window_exactly() {
    commands_that_fill_the_window_exactly(bash()).await;
}

#[tokio::test]
async fn bash_commands_that_fill_the_window_through_resizes() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash()).await;
    let id = &opened.session_id;
    // A resize in the same call as the command, then between calls (a send of nothing but
    // the size), at widths odd and even.
    for (cols, width, letter) in [
        (60, 60, 'A'),
        (60, 120, 'B'),
        (37, 37, 'C'),
        (37, 74, 'D'),
        (120, 120, 'E'),
    ] {
        let (command, lines) = echo_filling(width, letter);
        let reply = send(&pty, &owner, id, &command, Some(cols)).await;
        assert_eq!(
            reply,
            (lines, "$ ".to_owned()),
            "{width} characters at {cols} columns"
        );
    }
    for cols in [53, 80] {
        let resize = SendRequest::new("").submit(false).cols(cols);
        pty.send(&owner, id, resize).await.expect("resize");
        let (command, lines) = echo_filling(usize::from(cols), 'F');
        let reply = send(&pty, &owner, id, &command, None).await;
        assert_eq!(reply, (lines, "$ ".to_owned()), "after a resize to {cols}");
    }
    pty.shutdown().await;
}

#[tokio::test]
async fn python_expressions_that_fill_the_window_exactly() {
    for cols in [26u16, 40] {
        let (pty, owner) = service();
        let request = OpenRequest::new(format!("{} -q", python3())).cols(cols);
        let opened = open(&pty, &owner, request).await;
        assert_eq!(opened.pending, ">>> ");
        let id = &opened.session_id;
        for digit in ['1', '2', '3', '4'] {
            // `>>> 111…1*3` is exactly the window's width.
            let ones: String =
                std::iter::repeat_n(digit, usize::from(cols) - ">>> *3".len()).collect();
            let expression = format!("{ones}*3");
            let value = ones.parse::<u128>().expect("digits") * 3;
            let reply = send(&pty, &owner, id, &expression, None).await;
            assert_eq!(
                reply,
                (format!(">>> {expression}\n{value}\n"), ">>> ".to_owned()),
                "at {cols} columns"
            );
        }
        pty.shutdown().await;
    }
}

#[tokio::test]
async fn zsh_commands_that_fill_the_window_exactly() {
    require("zsh");
    commands_that_fill_the_window_exactly(OpenRequest::new("zsh -f").env("PS1", "$ ")).await;
}

#[tokio::test]
async fn output_lines_of_the_window_width_and_its_multiples() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, bash().cols(40)).await;
    let id = &opened.session_id;
    // Plain lines of exactly 40 and 80 characters; then two rows of exactly 40 redrawn in
    // place with cursor-up, as progress bars are.
    let command = "printf '%040d\\n%080d\\nend\\n' 1 2; \
         printf '%040d\\r\\n%040d\\r\\n' 3 4; printf '\\033[2A%040d\\r\\n%040d\\r\\n' 5 6";
    let (lines, pending) = send(&pty, &owner, id, command, None).await;
    let expected = format!(
        "$ {command}\n{:040}\n{:080}\nend\n{:040}\n{:040}\n",
        1, 2, 5, 6
    );
    // The echo of a command longer than the window wraps, and is one line.
    assert_eq!((lines, pending), (expected, "$ ".to_owned()));
    pty.shutdown().await;
}
