ZDOTDIR=$__pty_user_zdotdir
[[ -r $ZDOTDIR/.zprofile ]] && source "$ZDOTDIR/.zprofile"
__pty_user_zdotdir=$ZDOTDIR
ZDOTDIR=$__pty_zdotdir
