module gpuscale.dev/kedaoracle

go 1.19

require github.com/expr-lang/expr v1.17.8
