# pty-session's shell integration for zsh: this ZDOTDIR of ours reads the user's files
# from the user's ZDOTDIR (or HOME) as zsh would have, and .zshrc then adds our hooks.
__pty_zdotdir=$ZDOTDIR
__pty_key=$PTY_SESSION_SHELL_KEY
if [[ -n ${PTY_SESSION_USER_ZDOTDIR+set} ]]; then
    __pty_user_zdotdir=$PTY_SESSION_USER_ZDOTDIR
else
    __pty_user_zdotdir=$HOME
    __pty_unset_zdotdir=1
fi
unset PTY_SESSION_SHELL_KEY PTY_SESSION_USER_ZDOTDIR
ZDOTDIR=$__pty_user_zdotdir
[[ -r $ZDOTDIR/.zshenv ]] && source "$ZDOTDIR/.zshenv"
__pty_user_zdotdir=$ZDOTDIR
ZDOTDIR=$__pty_zdotdir
