module modelplane.local/pause

go 1.22
