ZDOTDIR=$__pty_user_zdotdir
[[ -r $ZDOTDIR/.zlogin ]] && source "$ZDOTDIR/.zlogin"
__pty_user_zdotdir=$ZDOTDIR
ZDOTDIR=$__pty_zdotdir
if [[ -n $__pty_unset_zdotdir ]]; then unset ZDOTDIR; else ZDOTDIR=$__pty_user_zdotdir; fi
unset __pty_zdotdir __pty_user_zdotdir __pty_unset_zdotdir
