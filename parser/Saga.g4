// Saga.g4 - the .saga language: a graph declaration, layers written as the
// four SAGA-NN stages, and a model composing layers. docs/language.md is the
// reference; names here match its sections.
grammar Saga;

file : decl* EOF ;

decl
  : graphDecl
  | layerDecl
  | modelDecl
  ;

// graph(self_loops) { vertex x: f32[1433]; edge w: f32 = 1.0; }
graphDecl : 'graph' ('(' ID (',' ID)* ')')? '{' graphInput* '}' ;
graphInput : kind=('vertex' | 'edge') ID ':' typeSpec ('=' MINUS? number)? ';' ;

// f32, f32[in, out], class[7]
typeSpec : ID ('[' expr (',' expr)* ']')? ;

layerDecl : 'layer' ID '(' (layerArg (',' layerArg)*)? ')' '{' layerItem* '}' ;
layerArg : ID ':' ID ;

layerItem
  : paramDecl
  | scatterStage
  | applyEdgeStage
  | gatherStage
  | applyVertexStage
  ;

// param W: f32[in, out] = glorot;   param eps: f32 = 0.0;
paramDecl : 'param' ID ':' typeSpec ('=' init)? ';' ;
init : ID | MINUS? number ;

scatterStage : 'scatter' '(' ID ')' block ;
applyEdgeStage : 'apply_edge' '(' ID ')' block ;
// gather(sum);   gather(softmax_sum(score));   gather(softmax_sum(score, dropout = 0.6));
gatherStage : 'gather' '(' ID ('(' ID (',' gatherOption)* ')')? ')' ';' ;
gatherOption : ID '=' MINUS? number ;
applyVertexStage : 'apply_vertex' '(' ID ',' ID ')' block ;

block : '{' stmt* '}' ;

stmt
  : ID '=' expr ';'      # assignStmt
  | 'return' expr ';'    # returnStmt
  ;

modelDecl : 'model' ID block ;

// Precedence, loosest last: postfix call and member, unary minus,
// `* / @` (left to right, as in Python), `+ -`.
expr
  : expr '(' (expr (',' expr)*)? ')'    # callExpr
  | expr '.' ID                         # memberExpr
  | MINUS expr                           # negExpr
  | expr op=('*' | '/' | '@') expr      # mulExpr
  | expr op=('+' | MINUS) expr          # addExpr
  | number                              # numberExpr
  | ID '#' INT                          # instanceExpr
  | ID                                  # nameExpr
  | '(' expr ')'                        # parenExpr
  | '[' (expr (',' expr)*)? ']'         # listExpr
  ;

number : INT | FLOAT ;

MINUS : '-' ;

INT : [0-9]+ ;
FLOAT : [0-9]+ '.' [0-9]+ EXPONENT? | '.' [0-9]+ EXPONENT? | [0-9]+ EXPONENT ;
fragment EXPONENT : [eE] [+-]? [0-9]+ ;
ID : [a-zA-Z_] [a-zA-Z_0-9]* ;

LINE_COMMENT : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
WS : [ \t\r\n]+ -> skip ;
