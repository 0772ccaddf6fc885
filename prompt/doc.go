package prompt
